/**
 * Export tokens (migration 0012): made by an authenticated call, taken once by a plain GET on any node.
 * A token is 32 random bytes (base64url); the database holds its SHA-256, so that reading the table gives
 * no working link.
 */
import crypto from 'node:crypto';
import type { ExpressionBuilder, Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/** How long a token works: long enough for a browser to follow it, short enough that a leaked one is spent. */
export const EXPORT_TOKEN_TTL_MS = 60_000;

/** Tokens past their expiry for this long are deleted when a new one is made. */
const KEPT_AFTER_EXPIRY_MS = 60 * 60_000;

export interface ExportTokenParams {
  organizationId: string;
  keyId: string;
  /** The export's query string (no leading ?), its time range resolved. */
  query: string;
  /** The export's body filters as JSON text, or null. */
  filters: string | null;
}

export const hashExportToken = (token: string): string => crypto.hash('sha256', token, 'hex');

export async function createExportToken(
  db: Kysely<Database>,
  params: ExportTokenParams,
  now = Date.now(),
): Promise<{ token: string; expiresAt: number }> {
  const token = crypto.randomBytes(32).toString('base64url');
  const expiresAt = now + EXPORT_TOKEN_TTL_MS;
  await db.transaction().execute(async (trx) => {
    await trx
      .deleteFrom('export_tokens')
      .where('expires_at', '<', now - KEPT_AFTER_EXPIRY_MS)
      .execute();
    await trx
      .insertInto('export_tokens')
      .values({
        token_hash: hashExportToken(token),
        organization_id: params.organizationId,
        key_id: params.keyId,
        query: params.query,
        filters: params.filters,
        created_at: now,
        expires_at: expiresAt,
        used_at: null,
      })
      .execute();
  });
  return { token, expiresAt };
}

/** A token that works: not used, not expired, made with a key that is not revoked. */
const usableAt = (now: number) => (eb: ExpressionBuilder<Database, 'export_tokens'>) =>
  eb.and([
    eb('used_at', 'is', null),
    eb('expires_at', '>', now),
    eb('key_id', 'in', eb.selectFrom('api_keys').select('api_keys.id').where('api_keys.revoked_at', 'is', null)),
  ]);

/**
 * Takes a token for its one use: a single UPDATE that only an unused, unexpired token of a key still
 * valid matches, so of two nodes (or two requests) given the same token exactly one gets its export.
 * Null when the token is unknown, used, expired or its key revoked.
 */
export async function claimExportToken(
  db: Kysely<Database>,
  token: string,
  now = Date.now(),
): Promise<Omit<ExportTokenParams, 'keyId'> | null> {
  const row = await db
    .updateTable('export_tokens')
    .set({ used_at: now })
    .where('token_hash', '=', hashExportToken(token))
    .where(usableAt(now))
    .returning(['organization_id', 'query', 'filters'])
    .executeTakeFirst();
  return row ? { organizationId: row.organization_id, query: row.query, filters: row.filters } : null;
}

/** Whether a token would work now, without using it (HEAD). */
export async function exportTokenUsable(db: Kysely<Database>, token: string, now = Date.now()): Promise<boolean> {
  const row = await db
    .selectFrom('export_tokens')
    .select('token_hash')
    .where('token_hash', '=', hashExportToken(token))
    .where(usableAt(now))
    .executeTakeFirst();
  return row !== undefined;
}
