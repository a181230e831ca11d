/**
 * The response cache (docs/api.md "Response cache"), shared by every node through the database, and the
 * organization's settings (`/api/settings/`: the cache's defaults and, later, retention).
 * `cache_entries.key` is the SHA-256 of the canonical request; `created_at` orders eviction (oldest
 * first, under GATELOG_CACHE_MAX_MB) and `expires_at` the sweep of what expired.
 */
import type { Kysely } from 'kysely';
import { organizationId, required } from './columns.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('cache_entries')
    .$call(organizationId)
    .$call(required({ key: 'text', kind: 'text', body: 'text', size: 'integer' }))
    .$call(required({ created_at: 'bigint', expires_at: 'bigint' }))
    .addPrimaryKeyConstraint('cache_entries_pk', ['organization_id', 'key'])
    .execute();
  await db.schema.createIndex('cache_entries_created').on('cache_entries').column('created_at').execute();
  await db.schema.createIndex('cache_entries_expires').on('cache_entries').column('expires_at').execute();
  await db.schema
    .createTable('organization_settings')
    .addColumn('organization_id', 'text', (c) => c.primaryKey().references('organizations.id').onDelete('cascade'))
    .$call(required({ settings: 'text', updated_at: 'bigint' }))
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('organization_settings').execute();
  await db.schema.dropTable('cache_entries').execute();
}
