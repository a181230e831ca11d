/**
 * Customer rollups (src/logs/rollups/rollup-kinds.ts): per organization, hour and day, customer, log
 * type and environment scope, the logs' counts and the count and sum of every metric field — what a
 * summary by customer over a long range reads instead of the logs. Logs written from now on add theirs
 * as they are written; those already stored are added by the background job of 0031 (their ids noted
 * here, in rollup_backfill's row 2), and until it is done summaries by customer read the logs.
 *
 * PostgreSQL: partitioned by the bucket's UTC month like log_rollups (0032), a partition for every month
 * the logs have one for; retention drops a month's partition with the month's logs.
 */
import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../dialect.js';

const DIMENSIONS: [string, 'text' | 'integer'][] = [
  ['is_test', 'integer'],
  ['environment', 'text'],
  ['log_type', 'text'],
  ['customer_identifier', 'text'],
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
/** Its row in rollup_backfill (log_rollups has 1). */
const BACKFILL_ID = 2;

/** A month's partition suffix, as 0032 names them: p202601 (pm000101 before year 0). */
function suffix(lo: number): string {
  const d = new Date(lo);
  const y = d.getUTCFullYear();
  return `p${y < 0 ? 'm' : ''}${String(Math.abs(y)).padStart(4, '0')}${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = isPostgres(db);
  let table = db.schema
    .createTable('log_customer_rollups')
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
  if (postgres) table = table.modifyEnd(sql`partition by range (bucket_start)`);
  await table.execute();
  await db.schema
    .createIndex('log_customer_rollups_key_idx')
    .on('log_customer_rollups')
    .columns(['organization_id', 'grain_ms', 'bucket_start', ...DIMENSIONS.map(([name]) => name)])
    .unique()
    .execute();

  if (postgres) {
    // The months the logs have partitions for (0032 and every start-up since made them).
    const { rows } = await sql<{ bound: string }>`
      select pg_get_expr(c.relpartbound, c.oid) as bound from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = 'logs'::regclass`.execute(db);
    for (const { bound } of rows) {
      const m = /FROM \('?(-?\d+)'?\) TO \('?(-?\d+)'?\)/.exec(bound);
      if (!m) continue;
      await sql`create table ${sql.id(`log_customer_rollups_${suffix(Number(m[1]))}`)}
        partition of log_customer_rollups for values from (${sql.lit(Number(m[1]))}) to (${sql.lit(Number(m[2]))})`.execute(
        db,
      );
    }
  }

  // The stored logs this table does not hold yet: all of them (the job of 0031 adds them).
  const stored = await sql<{
    lo: number | null;
    hi: number | null;
  }>`select min(id) as lo, max(id) as hi from logs`.execute(db);
  const { lo, hi } = stored.rows[0];
  if (hi !== null && lo !== null) {
    await db
      .insertInto('rollup_backfill')
      .values({ id: BACKFILL_ID, next_id: Number(lo), last_id: Number(hi) })
      .execute();
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
export async function down(db: Kysely<any>): Promise<void> {
  await db.deleteFrom('rollup_backfill').where('id', '=', BACKFILL_ID).execute();
  await db.schema.dropTable('log_customer_rollups').execute();
}
