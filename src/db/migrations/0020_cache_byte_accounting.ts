/**
 * The response cache's bytes, counted as they are written (src/cache/cache-store.ts): `cache_usage` holds
 * each organization's stored bytes, changed in the transaction that adds or removes its entries, so a
 * write knows the store's size without summing it and evicts before it commits — the bound holds at
 * every moment, across every node sharing the database. Eviction now picks, within the organization
 * holding the most, its oldest entries: an index by organization and age replaces the global one.
 */
import { type Kysely, sql } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('cache_usage')
    .addColumn('organization_id', 'text', (c) => c.primaryKey().references('organizations.id').onDelete('cascade'))
    .addColumn('bytes', 'bigint', (c) => c.notNull())
    .execute();
  // What is stored already is counted once, here.
  await sql`insert into cache_usage (organization_id, bytes)
    select organization_id, sum(size) from cache_entries group by organization_id`.execute(db);
  await db.schema
    .createIndex('cache_entries_org_created')
    .on('cache_entries')
    .columns(['organization_id', 'created_at'])
    .execute();
  await db.schema.dropIndex('cache_entries_created').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('cache_entries_created').on('cache_entries').column('created_at').execute();
  await db.schema.dropIndex('cache_entries_org_created').execute();
  await db.schema.dropTable('cache_usage').execute();
}
