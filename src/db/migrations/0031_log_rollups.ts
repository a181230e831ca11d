/**
 * Rollups (src/logs/rollups/): per organization, time bucket (a minute, an hour, a day) and combination
 * of the dimensions a summary groups and filters by most, the logs' counts, sums and sketches. Logs
 * written from now on add theirs as they are written; those already stored are added by a background
 * job (rollup_backfill names the ids still to add), and until it is done summaries read the logs.
 *
 * PostgreSQL merges two stored sketches (JSON text, bin → count) with gatelog_sketch_merge in an
 * upsert; SQLite with a function every connection registers (src/db/sqlite-open.ts).
 */
import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../dialect.js';

const DIMENSIONS: [string, 'text' | 'integer'][] = [
  ['is_test', 'integer'],
  ['environment', 'text'],
  ['model', 'text'],
  ['provider_id', 'text'],
  ['organization_key_name', 'text'],
  ['log_type', 'text'],
  ['status', 'text'],
  ['status_code', 'integer'],
  ['cache_hit', 'integer'],
];
const SUMMED = [
  'cost',
  'latency',
  'time_to_first_token',
  'routing_time',
  'prompt_tokens',
  'completion_tokens',
  'total_request_tokens',
  'tokens_per_second',
];
const SKETCHED = ['latency', 'time_to_first_token'];

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  let table = db.schema
    .createTable('log_rollups')
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('grain_ms', 'bigint', (c) => c.notNull())
    .addColumn('bucket_start', 'bigint', (c) => c.notNull());
  for (const [name, type] of DIMENSIONS) table = table.addColumn(name, type, (c) => c.notNull());
  table = table
    .addColumn('log_count', 'bigint', (c) => c.notNull())
    .addColumn('failed_count', 'bigint', (c) => c.notNull());
  for (const name of SUMMED) {
    table = table
      .addColumn(`${name}_n`, 'bigint', (c) => c.notNull())
      .addColumn(`${name}_sum`, 'double precision', (c) => c.notNull());
  }
  for (const name of SKETCHED) table = table.addColumn(`${name}_bins`, 'text', (c) => c.notNull());
  await table.execute();
  await db.schema
    .createIndex('log_rollups_key_idx')
    .on('log_rollups')
    .columns(['organization_id', 'grain_ms', 'bucket_start', ...DIMENSIONS.map(([name]) => name)])
    .unique()
    .execute();

  // The stored logs the rollups do not hold yet: ids from next_id to last_id (no row: none).
  await db.schema
    .createTable('rollup_backfill')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('next_id', 'bigint', (c) => c.notNull())
    .addColumn('last_id', 'bigint', (c) => c.notNull())
    .execute();
  const stored = await sql<{
    lo: number | null;
    hi: number | null;
  }>`select min(id) as lo, max(id) as hi from logs`.execute(db);
  const { lo, hi } = stored.rows[0];
  if (hi !== null && lo !== null) {
    await db
      .insertInto('rollup_backfill')
      .values({ id: 1, next_id: Number(lo), last_id: Number(hi) })
      .execute();
  }

  if (isPostgres(db)) {
    // Bins added bin by bin; a bin at 0 left out. Immutable: the same two sketches always merge the same.
    await sql`
      create or replace function gatelog_sketch_merge(a text, b text) returns text
      language sql immutable as $$
        select coalesce(
          (select jsonb_object_agg(k, n)::text from (
            select k, sum(v::numeric) as n from (
              select * from jsonb_each_text(coalesce(a, '{}')::jsonb)
              union all
              select * from jsonb_each_text(coalesce(b, '{}')::jsonb)
            ) e(k, v) group by k
          ) s where n <> 0),
          '{}')
      $$`.execute(db);
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('rollup_backfill').execute();
  await db.schema.dropTable('log_rollups').execute();
  if (isPostgres(db)) await sql`drop function if exists gatelog_sketch_merge(text, text)`.execute(db);
}
