/**
 * API keys. A key is `gl_live_…` or `gl_test_…` followed by random characters; only its SHA-256 and
 * its first characters (for lookup) are stored.
 */
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../db/dialect.js';
import type { ApiKeysTable, Database } from '../db/schema.js';
import { AppError } from '../errors.js';

export const KEY_PREFIX_LENGTH = 16;

export interface KeyOwner {
  email: string;
  first_name: string;
  last_name: string;
}

export interface ApiKeyInfo {
  id: string;
  name: string;
  prefix: string;
  is_test: boolean;
  organization_id: string;
  owner: KeyOwner;
  created_at: string;
  revoked_at: string | null;
}

export interface CreatedApiKey extends ApiKeyInfo {
  /** The secret, shown once. */
  key: string;
}

export function hashKey(key: string): string {
  // The one-shot form: every authenticated request hashes its key, and a Hash object costs ~4× more.
  return crypto.hash('sha256', key, 'hex');
}

function generateKey(isTest: boolean): string {
  return `gl_${isTest ? 'test' : 'live'}_${crypto.randomBytes(30).toString('base64url')}`;
}

export function toKeyInfo(row: ApiKeysTable): ApiKeyInfo {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    is_test: row.is_test === 1,
    organization_id: row.organization_id,
    owner: { email: row.owner_email, first_name: row.owner_first_name, last_name: row.owner_last_name },
    created_at: new Date(row.created_at).toISOString(),
    revoked_at: row.revoked_at === null ? null : new Date(row.revoked_at).toISOString(),
  };
}

export async function createApiKey(
  db: Kysely<Database>,
  input: { organizationId: string; name: string; isTest: boolean; owner?: Partial<KeyOwner> },
): Promise<CreatedApiKey> {
  const name = input.name.trim();
  if (name === '') throw new AppError(400, 'invalid_value', 'The key name must not be empty.', 'name');
  const key = generateKey(input.isTest);
  const row: ApiKeysTable = {
    id: crypto.randomUUID(),
    organization_id: input.organizationId,
    name,
    prefix: key.slice(0, KEY_PREFIX_LENGTH),
    key_hash: hashKey(key),
    is_test: input.isTest ? 1 : 0,
    owner_email: input.owner?.email ?? '',
    owner_first_name: input.owner?.first_name ?? '',
    owner_last_name: input.owner?.last_name ?? '',
    created_at: Date.now(),
    revoked_at: null,
  };
  try {
    await db.insertInto('api_keys').values(row).execute();
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw new AppError(409, 'duplicate_name', `This organization already has a key named '${name}'.`, 'name');
    }
    throw err;
  }
  return { ...toKeyInfo(row), key };
}

export async function listApiKeys(db: Kysely<Database>, organizationId: string): Promise<ApiKeyInfo[]> {
  const rows = await db
    .selectFrom('api_keys')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .orderBy('created_at')
    .orderBy('name')
    .execute();
  return rows.map(toKeyInfo);
}

/** Revokes a key; false when there is no such key. Revoking twice keeps the first time. */
export async function revokeApiKey(db: Kysely<Database>, keyId: string): Promise<boolean> {
  const existing = await db.selectFrom('api_keys').select(['id']).where('id', '=', keyId).executeTakeFirst();
  if (!existing) return false;
  await db
    .updateTable('api_keys')
    .set({ revoked_at: Date.now() })
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .execute();
  return true;
}
