/**
 * Indexes that serve the most common sorts other than id: a page sorted by cost or latency over many
 * matches reads the first rows in order instead of sorting every match (see src/logs/list/list.ts). The
 * timestamp makes them covering for range filters on the same column (`cost gt`) within a time range.
 */
import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('logs_sort_cost_idx')
    .on('logs')
    .columns(['organization_id', 'is_test', 'cost', 'timestamp'])
    .execute();
  await db.schema
    .createIndex('logs_sort_latency_idx')
    .on('logs')
    .columns(['organization_id', 'is_test', 'latency', 'timestamp'])
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('logs_sort_latency_idx').execute();
  await db.schema.dropIndex('logs_sort_cost_idx').execute();
}
