/**
 * The credentials area: provider keys registered per organization, encrypted at rest. The full key
 * leaves this module only through `resolveProviderKey`, for an upstream call.
 */
import type { Kysely } from 'kysely';
import { open, seal } from '../auth/secret-box.js';
import type { Database, ProviderCredentialsTable } from '../db/schema.js';
import { AppError } from '../errors.js';

/** Providers the gateway can call. A new provider is a new entry here and a folder under providers/. */
export const KNOWN_PROVIDERS = ['openai'] as const;
export type ProviderName = (typeof KNOWN_PROVIDERS)[number];

export interface ProviderKeyView {
  provider: string;
  base_url: string | null;
  api_key_preview: string;
  created_at: string;
  updated_at: string;
}

export interface ResolvedProviderKey {
  apiKey: string;
  baseUrl: string | null;
}

/** At most the first 3 and the last 4 characters; short keys show less so most of them stays hidden. */
export function previewKey(key: string): string {
  if (key.length >= 12) return `${key.slice(0, 3)}...${key.slice(-4)}`;
  if (key.length >= 8) return `...${key.slice(-2)}`;
  return '...';
}

const associatedData = (organizationId: string, provider: string) =>
  `provider_credentials:${organizationId}:${provider}`;

const toView = (row: ProviderCredentialsTable): ProviderKeyView => ({
  provider: row.provider,
  base_url: row.base_url,
  api_key_preview: row.api_key_preview,
  created_at: new Date(row.created_at).toISOString(),
  updated_at: new Date(row.updated_at).toISOString(),
});

export function assertKnownProvider(provider: string, param = 'provider'): asserts provider is ProviderName {
  if (!(KNOWN_PROVIDERS as readonly string[]).includes(provider)) {
    throw new AppError(
      400,
      'unknown_provider',
      `Unknown provider '${provider}'; supported: ${KNOWN_PROVIDERS.join(', ')}.`,
      param,
    );
  }
}

/** Registers or replaces an organization's key for a provider (created_at survives a replacement). */
export async function setProviderKey(
  db: Kysely<Database>,
  secretKey: Buffer,
  input: { organizationId: string; provider: string; apiKey: string; baseUrl: string | null },
): Promise<ProviderKeyView> {
  assertKnownProvider(input.provider);
  const now = Date.now();
  const row: ProviderCredentialsTable = {
    organization_id: input.organizationId,
    provider: input.provider,
    api_key_encrypted: seal(secretKey, input.apiKey, associatedData(input.organizationId, input.provider)),
    api_key_preview: previewKey(input.apiKey),
    base_url: input.baseUrl,
    created_at: now,
    updated_at: now,
  };
  await db
    .insertInto('provider_credentials')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['organization_id', 'provider']).doUpdateSet({
        api_key_encrypted: row.api_key_encrypted,
        api_key_preview: row.api_key_preview,
        base_url: row.base_url,
        updated_at: now,
      }),
    )
    .execute();
  const stored = await db
    .selectFrom('provider_credentials')
    .selectAll()
    .where('organization_id', '=', input.organizationId)
    .where('provider', '=', input.provider)
    .executeTakeFirstOrThrow();
  return toView(stored);
}

export async function listProviderKeys(db: Kysely<Database>, organizationId: string): Promise<ProviderKeyView[]> {
  const rows = await db
    .selectFrom('provider_credentials')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .orderBy('provider')
    .execute();
  return rows.map(toView);
}

/** Deletes a registered key; false when the organization has none for that provider. */
export async function deleteProviderKey(db: Kysely<Database>, organizationId: string, provider: string) {
  const result = await db
    .deleteFrom('provider_credentials')
    .where('organization_id', '=', organizationId)
    .where('provider', '=', provider)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The decrypted key and base URL for an upstream call, or null when none is registered. */
export async function resolveProviderKey(
  db: Kysely<Database>,
  secretKey: Buffer,
  organizationId: string,
  provider: ProviderName,
): Promise<ResolvedProviderKey | null> {
  const row = await db
    .selectFrom('provider_credentials')
    .select(['api_key_encrypted', 'base_url'])
    .where('organization_id', '=', organizationId)
    .where('provider', '=', provider)
    .executeTakeFirst();
  if (!row) return null;
  return {
    apiKey: open(secretKey, row.api_key_encrypted, associatedData(organizationId, provider)),
    baseUrl: row.base_url,
  };
}
