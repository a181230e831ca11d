/**
 * The credentials area (docs/api.md "Providers"): named providers registered per organization — their
 * kind, base URL, the models they serve — each with one or more weighted keys, encrypted at rest. A full
 * key leaves this module only through `loadProviders`, for upstream calls.
 */
import type { Kysely } from 'kysely';
import { open, seal } from '../auth/secret-box.js';
import type { Database, ProviderKeysTable, ProvidersTable } from '../db/schema.js';
import { AppError } from '../errors.js';

/** How gatelog talks to a provider: OpenAI's wire format (and every compatible server), Anthropic's, Azure's. */
export const PROVIDER_KINDS = ['openai', 'anthropic', 'azure'] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];
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

export interface ProviderView {
  provider: string;
  kind: ProviderKind;
  base_url: string | null;
  models: string[] | null;
  api_version: string | null;
  /** The preview of the key a one-key provider has (the first of several). */
  api_key_preview: string;
  keys: ProviderKeyEntryView[];
  created_at: string;
  updated_at: string;
}

/** A provider as an upstream call needs it, its keys decrypted. */
export interface RegisteredProvider {
  name: string;
  kind: ProviderKind;
  baseUrl: string | null;
  models: readonly string[] | null;
  apiVersion: string | null;
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
  apiVersion?: string | null;
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

const isKind = (kind: string): kind is ProviderKind => (PROVIDER_KINDS as readonly string[]).includes(kind);

/** Checks a registration; every refusal names its field. */
function validate(input: SetProviderInput): { kind: ProviderKind; keyId: string; weight: number } {
  if (!NAME.test(input.provider)) {
    throw new AppError(
      400,
      'invalid_provider',
      'A provider name is 1–64 letters, digits, dots, dashes or underscores (no slash: `name/model` names it in a call).',
      'provider',
    );
  }
  const kind = input.kind ?? (isKind(input.provider) ? input.provider : 'openai');
  if (!isKind(kind)) {
    throw new AppError(
      400,
      'unknown_provider_kind',
      `Unknown kind '${kind}'; one of ${PROVIDER_KINDS.join(', ')}.`,
      'kind',
    );
  }
  if (input.baseUrl === null && (kind === 'azure' || !isKind(input.provider))) {
    throw new AppError(
      400,
      'base_url_required',
      kind === 'azure'
        ? 'An Azure OpenAI provider needs base_url: its resource endpoint (https://NAME.openai.azure.com).'
        : `'${input.provider}' is not a provider gatelog knows the address of: give its base_url.`,
      'base_url',
    );
  }
  if (input.apiVersion != null && kind !== 'azure') {
    throw new AppError(400, 'invalid_field', 'api_version is for Azure OpenAI providers only.', 'api_version');
  }
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
  return { kind, keyId, weight };
}

/** Registers a provider or changes it, and adds or replaces one of its keys (the others stay). */
export async function setProviderKey(
  db: Kysely<Database>,
  secretKey: Buffer,
  input: SetProviderInput,
): Promise<ProviderView> {
  const { kind, keyId, weight } = validate(input);
  const now = Date.now();
  const provider: ProvidersTable = {
    organization_id: input.organizationId,
    name: input.provider,
    kind,
    base_url: input.baseUrl,
    models: input.models ? JSON.stringify(input.models) : null,
    api_version: input.apiVersion ?? null,
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
          api_version: provider.api_version,
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
  const [view] = await views(db, input.organizationId, input.provider);
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
          api_version: row.api_version,
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

async function views(db: Kysely<Database>, organizationId: string, name?: string): Promise<ProviderView[]> {
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
      return {
        provider: p.name,
        kind: p.kind as ProviderKind,
        base_url: p.base_url,
        models: models(p.models),
        api_version: p.api_version,
        api_key_preview: own[0]?.api_key_preview ?? '',
        keys: own,
        created_at: iso(p.created_at),
        updated_at: iso(p.updated_at),
      };
    });
}

export function listProviderKeys(db: Kysely<Database>, organizationId: string): Promise<ProviderView[]> {
  return views(db, organizationId);
}

/** Deletes a provider with its keys; false when the organization has no provider of that name. */
export async function deleteProviderKey(db: Kysely<Database>, organizationId: string, provider: string) {
  return db.transaction().execute(async (trx) => {
    await trx
      .deleteFrom('provider_keys')
      .where('organization_id', '=', organizationId)
      .where('provider', '=', provider)
      .execute();
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
  const result = await db
    .deleteFrom('provider_keys')
    .where('organization_id', '=', organizationId)
    .where('provider', '=', provider)
    .where('key_id', '=', keyId)
    .executeTakeFirst();
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
    kind: p.kind as ProviderKind,
    baseUrl: p.base_url,
    models: models(p.models),
    apiVersion: p.api_version,
    keys: keys.map((k) => ({
      keyId: k.key_id,
      apiKey: open(secretKey, k.api_key_encrypted, associatedData(organizationId, p.name, k.key_id)),
      weight: k.weight,
    })),
    createdAt: Number(p.created_at),
  }));
}
