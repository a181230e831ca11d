/**
 * Export tokens (docs/api.md "Exporting logs"): a short-lived, single-use link to one export, so that a
 * browser downloads it to disk by a plain GET without the API key in the URL. Kept in the database, not
 * in a node's memory, so that any node of several sharing it takes the link. The token itself is never
 * stored, only its SHA-256; the key it was made with is, so that revoking the key ends its links.
 */
import type { Kysely } from 'kysely';
import { organizationId, required } from './columns.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('export_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .$call(organizationId)
    .addColumn('key_id', 'text', (c) => c.notNull().references('api_keys.id').onDelete('cascade'))
    .addColumn('query', 'text', (c) => c.notNull())
    .addColumn('filters', 'text')
    .$call(required({ created_at: 'bigint', expires_at: 'bigint' }))
    .addColumn('used_at', 'bigint')
    .execute();
  // Old tokens are deleted by their expiry.
  await db.schema.createIndex('export_tokens_expires_at').on('export_tokens').column('expires_at').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('export_tokens').execute();
}
