/**
 * Indexes that serve the most common sorts other than id: a page sorted by cost or latency over many
 * matches reads the first rows in order instead of sorting every match (see src/logs/list/list.ts). The
 * timestamp makes them covering for range filters on the same column (`cost gt`) within a time range.
 */
import type { Kysely } from 'kysely';
import { createIndex } from './columns.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  await createIndex(db, 'logs_sort_cost_idx', 'logs', ['organization_id', 'is_test', 'cost', 'timestamp']);
  await createIndex(db, 'logs_sort_latency_idx', 'logs', ['organization_id', 'is_test', 'latency', 'timestamp']);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('logs_sort_latency_idx').execute();
  await db.schema.dropIndex('logs_sort_cost_idx').execute();
}
