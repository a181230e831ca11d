/**
 * An index for filters on customer_identifier, the most common way to look for logs: equality, and the
 * substring and case-insensitive filters narrowed to candidate values through the facet counts
 * (src/logs/list/filter-plan.ts). With the timestamp next, a count over a range reads the index only; the id
 * last lets PostgreSQL page from it without reading log rows too (SQLite's indexes hold the id anyway).
 */
import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('logs_customer_idx')
    .on('logs')
    .columns(['organization_id', 'is_test', 'customer_identifier', 'timestamp', 'id'])
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('logs_customer_idx').execute();
}
