/**
 * The credentials area (docs/api.md "Providers"): named providers registered per organization — their
 * kind, base URL, the models they serve — each with one or more weighted keys, encrypted at rest. A full
 * key leaves this module only through `loadProviders`, for upstream calls.
 */
import type { Kysely, Transaction } from 'kysely';
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

async function views(
  db: Kysely<Database> | Transaction<Database>,
  organizationId: string,
  name?: string,
): Promise<ProviderView[]> {
  let providers = db.selectFrom('providers').selectAll().where('organization_id', '=', organizationId);
  let keys = db
    .selectFrom('provider_keys')
    .select(['provider', 'key_id', 'api_key_preview', 'weight', 'created_at', 'updated_at'])
    .where('organization_id', '=', organizationId);
  if (name !== undefined) {
    providers = providers.where('name', '=', name);
    keys = keys.where('provider', '=', name);
  }
  const [providerRows, keyRows] = await Promise.all([
    providers.orderBy('name').execute(),
    keys.orderBy('created_at').orderBy('key_id').execute(),
  ]);
  const iso = (ms: number | string) => new Date(Number(ms)).toISOString();
  return providerRows.map((p) => {
    const own = keyRows
      .filter((k) => k.provider === p.name)
      .map((k) => ({
        key_id: k.key_id,
        api_key_preview: k.api_key_preview,
        weight: Number(k.weight),
        created_at: iso(k.created_at),
        updated_at: iso(k.updated_at),
      }));
    return {
      provider: p.name,
      kind: p.kind as ProviderKind,
      base_url: p.base_url,
      models: p.models === null ? null : (JSON.parse(p.models) as string[]),
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

/**
 * The organization's providers with their keys decrypted, in the order they were registered. One query
 * (a proxied call may wait for it while its upload is arriving).
 */
export async function loadProviders(
  db: Kysely<Database>,
  secretKey: Buffer,
  organizationId: string,
): Promise<RegisteredProvider[]> {
  const rows = await db
    .selectFrom('providers as p')
    .leftJoin('provider_keys as k', (join) =>
      join.onRef('k.organization_id', '=', 'p.organization_id').onRef('k.provider', '=', 'p.name'),
    )
    .select([
      'p.name',
      'p.kind',
      'p.base_url',
      'p.models',
      'p.api_version',
      'p.created_at',
      'k.key_id',
      'k.api_key_encrypted',
      'k.weight',
    ])
    .where('p.organization_id', '=', organizationId)
    .orderBy('p.created_at')
    .orderBy('p.name')
    .orderBy('k.created_at')
    .orderBy('k.key_id')
    .execute();
  const providers = new Map<string, RegisteredProvider & { keys: RegisteredProvider['keys'][number][] }>();
  for (const row of rows) {
    let provider = providers.get(row.name);
    if (!provider) {
      provider = {
        name: row.name,
        kind: row.kind as ProviderKind,
        baseUrl: row.base_url,
        models: row.models === null ? null : (JSON.parse(row.models) as string[]),
        apiVersion: row.api_version,
        keys: [],
        createdAt: Number(row.created_at),
      };
      providers.set(row.name, provider);
    }
    if (row.key_id !== null && row.api_key_encrypted !== null) {
      provider.keys.push({
        keyId: row.key_id,
        apiKey: open(secretKey, row.api_key_encrypted, associatedData(organizationId, row.name, row.key_id)),
        weight: Number(row.weight),
      });
    }
  }
  return [...providers.values()];
}
