/**
 * API keys. A key is `gl_live_…` or `gl_test_…` followed by random characters; only its SHA-256 and
 * its first characters (for lookup) are stored. A key keeps its id, settings and logs across rotations:
 * a rotation gives it a new secret and keeps the old one valid for a grace period.
 */
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../db/dialect.js';
import { OrganizationRows } from '../db/organization-rows.js';
import type { ApiKeysTable, Database } from '../db/schema.js';
import { AppError } from '../errors.js';
import { type KeyControls, parseKeyControls, type RateLimits, storedControls } from './key-controls.js';
import { defaultScopes, type Scope } from './scopes.js';

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
  scopes: Scope[];
  allowed_models: string[];
  expires_at: string | null;
  rate_limits: RateLimits;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface CreatedApiKey extends ApiKeyInfo {
  /** The secret, shown once. */
  key: string;
}

/** How many leading characters of a key are stored for lookup. */
export const KEY_PREFIX_LENGTH = 16;
/** The longest grace a rotated secret may keep: a week. */
export const MAX_GRACE_SECONDS = 604_800;

export function hashKey(key: string): string {
  // The one-shot form: every authenticated request hashes its key, and a Hash object costs ~4× more.
  return crypto.hash('sha256', key, 'hex');
}

function generateKey(isTest: boolean): string {
  return `gl_${isTest ? 'test' : 'live'}_${crypto.randomBytes(30).toString('base64url')}`;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

export function toKeyInfo(row: ApiKeysTable): ApiKeyInfo {
  const controls = parseKeyControls(row);
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    is_test: row.is_test === 1,
    organization_id: row.organization_id,
    owner: { email: row.owner_email, first_name: row.owner_first_name, last_name: row.owner_last_name },
    scopes: controls.scopes,
    allowed_models: controls.allowed_models,
    expires_at: iso(controls.expires_at),
    rate_limits: controls.rate_limits,
    created_at: new Date(Number(row.created_at)).toISOString(),
    last_used_at: iso(row.last_used_at),
    revoked_at: iso(row.revoked_at),
  };
}

export interface NewKey {
  organizationId: string;
  name: string;
  isTest: boolean;
  owner?: Partial<KeyOwner>;
  /** Scopes, models, limits and expiry; what is left out takes the defaults (every scope but a test key's admin). */
  controls?: Partial<KeyControls>;
}

export async function createApiKey(db: Kysely<Database>, input: NewKey): Promise<CreatedApiKey> {
  const name = input.name.trim();
  if (name === '') throw new AppError(400, 'invalid_value', 'The key name must not be empty.', 'name');
  const controls: KeyControls = {
    scopes: input.controls?.scopes ?? defaultScopes(input.isTest),
    allowed_models: input.controls?.allowed_models ?? [],
    rate_limits: input.controls?.rate_limits ?? {},
    expires_at: input.controls?.expires_at ?? null,
  };
  if (input.isTest && controls.scopes.includes('admin')) {
    throw new AppError(400, 'invalid_value', 'A test key cannot hold the admin scope.', 'scopes');
  }
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
    ...storedControls(controls),
    last_used_at: null,
    previous_prefix: null,
    previous_key_hash: null,
    previous_valid_until: null,
  };
  try {
    await db.insertInto('api_keys').values(row).execute();
  } catch (err) {
    throw duplicateName(err, name);
  }
  return { ...toKeyInfo(row), key };
}

function duplicateName(err: unknown, name: string): unknown {
  return isUniqueViolation(err)
    ? new AppError(409, 'duplicate_name', `This organization already has a key named '${name}'.`, 'name')
    : err;
}

export async function listApiKeys(db: Kysely<Database>, organizationId: string): Promise<ApiKeyInfo[]> {
  const rows = await new OrganizationRows(db, 'api_keys', 'No such key.').list(organizationId, 'name');
  return rows.map(toKeyInfo);
}

/** A key of the organization, or a 404 (another organization's key id is no key at all). */
export async function requireApiKey(
  db: Kysely<Database>,
  organizationId: string,
  keyId: string,
): Promise<ApiKeysTable> {
  const ofOrganization = { organization_id: organizationId, id: keyId };
  const row = await db
    .selectFrom('api_keys')
    .selectAll()
    .where((eb) => eb.and(ofOrganization))
    .executeTakeFirst();
  if (!row) throw new AppError(404, 'not_found', `No key with id '${keyId}'.`);
  return row;
}

export interface KeyChanges {
  name?: string;
  owner?: Partial<KeyOwner>;
  controls?: Partial<KeyControls>;
}

/** Changes a key's name, owner or controls; the secret stays. */
export async function updateApiKey(
  db: Kysely<Database>,
  row: ApiKeysTable,
  changes: KeyChanges,
): Promise<ApiKeysTable> {
  const controls = { ...parseKeyControls(row), ...changes.controls };
  if (row.is_test === 1 && controls.scopes.includes('admin')) {
    throw new AppError(400, 'invalid_value', 'A test key cannot hold the admin scope.', 'scopes');
  }
  const name = changes.name?.trim() ?? row.name;
  if (name === '') throw new AppError(400, 'invalid_value', 'The key name must not be empty.', 'name');
  const next: ApiKeysTable = {
    ...row,
    name,
    owner_email: changes.owner?.email ?? row.owner_email,
    owner_first_name: changes.owner?.first_name ?? row.owner_first_name,
    owner_last_name: changes.owner?.last_name ?? row.owner_last_name,
    ...storedControls(controls),
  };
  const { id, organization_id: _org, created_at: _created, ...set } = next;
  try {
    await db.updateTable('api_keys').set(set).where('id', '=', id).execute();
  } catch (err) {
    throw duplicateName(err, name);
  }
  return next;
}

/** A new secret for the same key; the old one stays valid for graceSeconds (0: at once refused). */
export async function rotateApiKey(
  db: Kysely<Database>,
  row: ApiKeysTable,
  graceSeconds: number,
): Promise<CreatedApiKey> {
  const key = generateKey(row.is_test === 1);
  const now = Date.now();
  const grace = graceSeconds > 0;
  const next: ApiKeysTable = {
    ...row,
    prefix: key.slice(0, KEY_PREFIX_LENGTH),
    key_hash: hashKey(key),
    previous_prefix: grace ? row.prefix : null,
    previous_key_hash: grace ? row.key_hash : null,
    previous_valid_until: grace ? now + graceSeconds * 1000 : null,
  };
  await db
    .updateTable('api_keys')
    .set({
      prefix: next.prefix,
      key_hash: next.key_hash,
      previous_prefix: next.previous_prefix,
      previous_key_hash: next.previous_key_hash,
      previous_valid_until: next.previous_valid_until,
    })
    .where('id', '=', row.id)
    .execute();
  return { ...toKeyInfo(next), key };
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
