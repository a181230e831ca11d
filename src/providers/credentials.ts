/**
 * The credentials area (docs/api.md "Providers"): named providers registered per organization — their
 * kind, base URL, the models they serve, their kind's options — each with one or more weighted keys,
 * encrypted at rest. A full key leaves this module only through `loadProviders`, for upstream calls.
 */
import type { Kysely } from 'kysely';
import { open, seal } from '../auth/secret-box.js';
import type { Database, ProviderKeysTable, ProvidersTable } from '../db/schema.js';
import { AppError } from '../errors.js';
import type { ProviderRegistry } from './registry.js';

/** How gatelog talks to a provider: the name of one of the registry's kinds (registry.ts). */
export type ProviderKind = string;
/** A provider's name: what `provider/model`, `customer_credentials` and the log's provider_id say. */
export type ProviderName = string;

/** The key a one-key provider has, and what a POST without `key_id` replaces. */
export const DEFAULT_KEY_ID = 'default';
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const MODEL_PATTERN = /^[^*\s]{1,200}\*?$/;

export interface ProviderKeyEntryView {
  key_id: string;
  api_key_preview: string;
  weight: number;
  created_at: string;
  updated_at: string;
}

/**
 * A provider as the API shows it. Its kind's options are fields of their own beside the others
 * (`api_version`), as a registration gives them: every option of every kind the registry knows is
 * there, null where the provider's kind has none or it was not set.
 */
export type ProviderView = {
  provider: string;
  kind: ProviderKind;
  base_url: string | null;
  models: string[] | null;
  /** The preview of the key a one-key provider has (the first of several). */
  api_key_preview: string;
  keys: ProviderKeyEntryView[];
  created_at: string;
  updated_at: string;
} & { [option: string]: unknown };

/** A provider's kind's own settings (Azure's api_version), as its kind's schema accepted them. */
export type ProviderOptions = Readonly<Record<string, unknown>>;

/** A provider as an upstream call needs it, its keys decrypted. */
export interface RegisteredProvider {
  name: string;
  kind: ProviderKind;
  baseUrl: string | null;
  models: readonly string[] | null;
  /** Absent: none ({}); loadProviders always sets it. */
  options?: ProviderOptions;
  /**
   * Unused since the API version became an option of the azure kind (`options.api_version`): kept so
   * that code which builds providers by hand, as some tests do, still compiles.
   */
  apiVersion?: string | null;
  keys: readonly { keyId: string; apiKey: string; weight: number }[];
  createdAt: number;
}

export interface SetProviderInput {
  organizationId: string;
  provider: string;
  apiKey: string;
  baseUrl: string | null;
  kind?: string | null;
  models?: readonly string[] | null;
  /** The registration's option fields, as given (null: not given); checked by the kind's schema. */
  options?: Readonly<Record<string, unknown>>;
  keyId?: string | null;
  weight?: number | null;
}

/** At most the first 3 and the last 4 characters; short keys show less so most of them stays hidden. */
export function previewKey(key: string): string {
  if (key.length >= 12) return `${key.slice(0, 3)}...${key.slice(-4)}`;
  if (key.length >= 8) return `...${key.slice(-2)}`;
  return '...';
}

/** The sealed key's associated data: a key moved to another organization, provider or id does not open. */
const associatedData = (organizationId: string, provider: string, keyId: string) =>
  keyId === DEFAULT_KEY_ID
    ? `provider_credentials:${organizationId}:${provider}`
    : `provider_credentials:${organizationId}:${provider}:${keyId}`;

/** Checks a registration; every refusal names its field. */
function validate(
  input: SetProviderInput,
  kinds: ProviderRegistry,
): { kind: ProviderKind; options: Record<string, unknown>; keyId: string; weight: number } {
  if (!NAME.test(input.provider)) {
    throw new AppError(
      400,
      'invalid_provider',
      'A provider name is 1–64 letters, digits, dots, dashes or underscores (no slash: `name/model` names it in a call).',
      'provider',
    );
  }
  const kind = kinds.get(input.kind ?? kinds.defaultKindFor(input.provider));
  if (kind === undefined) {
    throw new AppError(
      400,
      'unknown_provider_kind',
      `Unknown kind '${input.kind}'; one of ${kinds.names.join(', ')}.`,
      'kind',
    );
  }
  if (input.baseUrl === null && (kind.defaultBaseUrl === null || kinds.get(input.provider) === undefined)) {
    throw new AppError(
      400,
      'base_url_required',
      kind.defaultBaseUrl === null
        ? `A provider of kind ${kind.name} (${kind.label}) needs a base_url, such as ${kind.baseUrlHint}.`
        : `'${input.provider}' is not a provider gatelog knows the address of: give its base_url.`,
      'base_url',
    );
  }
  const options = kinds.parseOptions(kind, input.options ?? {});
  for (const [i, model] of (input.models ?? []).entries()) {
    if (!MODEL_PATTERN.test(model)) {
      throw new AppError(
        400,
        'invalid_model_pattern',
        'A model is a name or a prefix ending in * (no spaces, at most 200 characters).',
        `models.${i}`,
      );
    }
  }
  const keyId = input.keyId ?? DEFAULT_KEY_ID;
  if (!NAME.test(keyId)) {
    throw new AppError(
      400,
      'invalid_key_id',
      'A key_id is 1–64 letters, digits, dots, dashes or underscores.',
      'key_id',
    );
  }
  const weight = input.weight ?? 1;
  if (!Number.isFinite(weight) || weight <= 0 || weight > 1e6) {
    throw new AppError(400, 'invalid_weight', 'weight is a number above 0 and at most 1000000.', 'weight');
  }
  return { kind: kind.name, options, keyId, weight };
}

/**
 * Registers a provider or changes it (all of it: its kind, base URL, models and options are the
 * input's), and adds or replaces one of its keys (the others stay).
 */
export async function setProviderKey(
  db: Kysely<Database>,
  secretKey: Buffer,
  input: SetProviderInput,
  kinds: ProviderRegistry,
): Promise<ProviderView> {
  const { kind, options, keyId, weight } = validate(input, kinds);
  const now = Date.now();
  const provider: ProvidersTable = {
    organization_id: input.organizationId,
    name: input.provider,
    kind,
    base_url: input.baseUrl,
    models: input.models ? JSON.stringify(input.models) : null,
    options: JSON.stringify(options),
    created_at: now,
    updated_at: now,
  };
  const key: ProviderKeysTable = {
    organization_id: input.organizationId,
    provider: input.provider,
    key_id: keyId,
    api_key_encrypted: seal(secretKey, input.apiKey, associatedData(input.organizationId, input.provider, keyId)),
    api_key_preview: previewKey(input.apiKey),
    weight,
    created_at: now,
    updated_at: now,
  };
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('providers')
      .values(provider)
      .onConflict((oc) =>
        oc.columns(['organization_id', 'name']).doUpdateSet({
          kind: provider.kind,
          base_url: provider.base_url,
          models: provider.models,
          options: provider.options,
          updated_at: now,
        }),
      )
      .execute();
    await trx
      .insertInto('provider_keys')
      .values(key)
      .onConflict((oc) =>
        oc.columns(['organization_id', 'provider', 'key_id']).doUpdateSet({
          api_key_encrypted: key.api_key_encrypted,
          api_key_preview: key.api_key_preview,
          weight: key.weight,
          updated_at: now,
        }),
      )
      .execute();
  });
  const [view] = await views(db, kinds, input.organizationId, input.provider);
  return view;
}

/** A provider's row with its keys' rows, as stored. */
interface StoredProvider {
  provider: ProvidersTable;
  keys: Omit<ProviderKeysTable, 'organization_id' | 'provider'>[];
}

/**
 * The organization's providers (or the one named) with their keys, in the order they were registered,
 * in one query (a proxied call may wait for it while its upload arrives).
 */
async function readProviders(db: Kysely<Database>, organizationId: string, name?: string): Promise<StoredProvider[]> {
  let query = db
    .selectFrom('providers as p')
    .leftJoin('provider_keys as k', (join) =>
      join.onRef('k.organization_id', '=', 'p.organization_id').onRef('k.provider', '=', 'p.name'),
    )
    .selectAll('p')
    .select([
      'k.key_id',
      'k.api_key_encrypted',
      'k.api_key_preview',
      'k.weight',
      'k.created_at as key_created_at',
      'k.updated_at as key_updated_at',
    ])
    .where('p.organization_id', '=', organizationId);
  if (name !== undefined) query = query.where('p.name', '=', name);
  const rows = await query
    .orderBy('p.created_at')
    .orderBy('p.name')
    .orderBy('k.created_at')
    .orderBy('k.key_id')
    .execute();
  const providers = new Map<string, StoredProvider>();
  for (const row of rows) {
    let stored = providers.get(row.name);
    if (!stored) {
      stored = {
        provider: {
          organization_id: row.organization_id,
          name: row.name,
          kind: row.kind,
          base_url: row.base_url,
          models: row.models,
          options: row.options,
          created_at: row.created_at,
          updated_at: row.updated_at,
        },
        keys: [],
      };
      providers.set(row.name, stored);
    }
    if (row.key_id !== null && row.api_key_encrypted !== null && row.api_key_preview !== null) {
      stored.keys.push({
        key_id: row.key_id,
        api_key_encrypted: row.api_key_encrypted,
        api_key_preview: row.api_key_preview,
        weight: Number(row.weight),
        created_at: Number(row.key_created_at),
        updated_at: Number(row.key_updated_at),
      });
    }
  }
  return [...providers.values()];
}

const models = (stored: string | null) => (stored === null ? null : (JSON.parse(stored) as string[]));
const optionsOf = (stored: string) => JSON.parse(stored) as Record<string, unknown>;

async function views(
  db: Kysely<Database>,
  kinds: ProviderRegistry,
  organizationId: string,
  name?: string,
): Promise<ProviderView[]> {
  const iso = (ms: number | string) => new Date(Number(ms)).toISOString();
  const stored = await readProviders(db, organizationId, name);
  return stored
    .sort((x, y) => (x.provider.name < y.provider.name ? -1 : x.provider.name > y.provider.name ? 1 : 0))
    .map(({ provider: p, keys }) => {
      const own = keys.map((k) => ({
        key_id: k.key_id,
        api_key_preview: k.api_key_preview,
        weight: k.weight,
        created_at: iso(k.created_at),
        updated_at: iso(k.updated_at),
      }));
      const options = optionsOf(p.options);
      const fields: Record<string, unknown> = {};
      for (const field of kinds.optionFields.keys()) fields[field] = options[field] ?? null;
      return {
        provider: p.name,
        kind: p.kind,
        base_url: p.base_url,
        models: models(p.models),
        ...fields,
        api_key_preview: own[0]?.api_key_preview ?? '',
        keys: own,
        created_at: iso(p.created_at),
        updated_at: iso(p.updated_at),
      };
    });
}

export function listProviderKeys(
  db: Kysely<Database>,
  organizationId: string,
  kinds: ProviderRegistry,
): Promise<ProviderView[]> {
  return views(db, kinds, organizationId);
}

/** Deletes a provider's keys (narrowed further by the caller, or all of them). */
function deleteKeys(db: Kysely<Database>, organizationId: string, provider: string) {
  return db.deleteFrom('provider_keys').where('organization_id', '=', organizationId).where('provider', '=', provider);
}

/** Deletes a provider with its keys; false when the organization has no provider of that name. */
export async function deleteProviderKey(db: Kysely<Database>, organizationId: string, provider: string) {
  return db.transaction().execute(async (trx) => {
    await deleteKeys(trx, organizationId, provider).execute();
    const result = await trx
      .deleteFrom('providers')
      .where('organization_id', '=', organizationId)
      .where('name', '=', provider)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  });
}

/** Deletes one key of a provider; false when there is no such key. */
export async function deleteOneProviderKey(
  db: Kysely<Database>,
  organizationId: string,
  provider: string,
  keyId: string,
): Promise<boolean> {
  const result = await deleteKeys(db, organizationId, provider).where('key_id', '=', keyId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The organization's providers with their keys decrypted, in the order they were registered. */
export async function loadProviders(
  db: Kysely<Database>,
  secretKey: Buffer,
  organizationId: string,
): Promise<RegisteredProvider[]> {
  return (await readProviders(db, organizationId)).map(({ provider: p, keys }) => ({
    name: p.name,
    kind: p.kind,
    baseUrl: p.base_url,
    models: models(p.models),
    options: optionsOf(p.options),
    keys: keys.map((k) => ({
      keyId: k.key_id,
      apiKey: open(secretKey, k.api_key_encrypted, associatedData(organizationId, p.name, k.key_id)),
      weight: k.weight,
    })),
    createdAt: Number(p.created_at),
  }));
}
