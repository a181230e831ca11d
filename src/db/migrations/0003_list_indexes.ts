/**
 * Indexes for the request-log list at scale (bench/README.md has the numbers behind them).
 *
 * - logs_scope_idx covers the scope (organization, is_test, time range) and the most filtered columns,
 *   so counts and common filters read the index only, never the wide log rows.
 * - log_metadata gets the log's timestamp (logs never change their timestamp), so a metadata__ filter
 *   looks up only the matching rows of the requested time range.
 */
import { sql, type Kysely } from 'kysely';
import { createIndex, rebuildIndex } from './columns.js';

/** logs_scope_idx's columns (0019 widens it on SQLite, and its `down` puts these back). */
export const SCOPE_COLUMNS = [
  'organization_id',
  'is_test',
  'timestamp',
  'model',
  'status_code',
  'cost',
  'latency',
  'customer_identifier',
];

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  await createIndex(db, 'logs_scope_idx', 'logs', SCOPE_COLUMNS);
  await db.schema
    .alterTable('log_metadata')
    .addColumn('timestamp', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`update log_metadata set timestamp = (select logs.timestamp from logs where logs.id = log_metadata.log_id)`.execute(
    db,
  );
  await rebuildIndex(db, 'log_metadata_lookup_idx', 'log_metadata', [
    'organization_id',
    'key',
    'value_text',
    'timestamp',
  ]);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('log_metadata_lookup_idx').execute();
  await db.schema.alterTable('log_metadata').dropColumn('timestamp').execute();
  await createIndex(db, 'log_metadata_lookup_idx', 'log_metadata', ['organization_id', 'key', 'value_text']);
  await db.schema.dropIndex('logs_scope_idx').execute();
}
