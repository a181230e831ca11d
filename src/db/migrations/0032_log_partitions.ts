/**
 * PostgreSQL: the logs and what is kept per log or per time bucket — `logs`, `log_metadata`,
 * `log_facets`, `log_rollups` — partitioned by UTC month of the log's timestamp (epoch ms; the bucket's
 * start for facets and rollups, whose buckets of a day at most each lie in one month), so that retention
 * detaches a whole month of all four at once and each month's indexes stay small (docs/decisions.md
 * "Partitions by month"). SQLite is left as it is.
 *
 * A partitioned table's keys must hold the partition key, so:
 * - the logs' primary key is (id, timestamp) and log_metadata's (log_id, key, timestamp);
 * - `unique_id` stays unique over all months through `log_unique_ids` (one row per log, its key the
 *   unique_id), which a statement trigger fills as logs are inserted: a second log with a stored
 *   unique_id is refused with a unique violation, as before;
 * - scores, log_metadata and log_search no longer hold foreign keys to the logs (a foreign key would
 *   need the log's timestamp in every row, and a detached month would be checked row by row); a
 *   statement trigger deletes what hung off deleted logs, as the cascades did.
 *
 * An existing database is converted here: every row copied into the new tables with its id, the id
 * sequence kept (its next value unchanged), the indexes and foreign keys built again as they were. It
 * rewrites the four tables once: minutes for tens of millions of logs (docs/scaling.md).
 */
import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../dialect.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
type AnyDb = Kysely<any>;

/** Months ahead of the current one that get their partitions now (start-up and retention add more). */
const MONTHS_AHEAD = 2;

/** The first instant (epoch ms) of the UTC month holding `ms`, and `months` later. */
function monthStart(ms: number, months = 0): number {
  const d = new Date(ms);
  // Not Date.UTC: it reads the years 0 to 99 as 1900 to 1999.
  const start = new Date(0);
  start.setUTCFullYear(d.getUTCFullYear(), d.getUTCMonth() + months, 1);
  return start.getTime();
}

/** A month's partition suffix: p202601 (pm000101 before year 0). */
function suffix(lo: number): string {
  const d = new Date(lo);
  const y = d.getUTCFullYear();
  return `p${y < 0 ? 'm' : ''}${String(Math.abs(y)).padStart(4, '0')}${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** The tables partitioned, by the column that holds each row's instant, with their primary keys. */
const TABLES: { name: string; column: string; key: string | null }[] = [
  { name: 'logs', column: 'timestamp', key: 'constraint logs_pkey primary key (id, timestamp)' },
  { name: 'log_metadata', column: 'timestamp', key: 'constraint log_metadata_pk primary key (log_id, key, timestamp)' },
  {
    name: 'log_facets',
    column: 'bucket_start',
    key: 'constraint log_facets_pk primary key (organization_id, field, grain_ms, bucket_start, is_test, value_text)',
  },
  // Its key is a unique index (log_rollups_key_idx), built again below like the other indexes.
  { name: 'log_rollups', column: 'bucket_start', key: null },
];
/** The primary keys' names, freed before the new tables take them. */
const KEYS = ['logs_pkey', 'log_metadata_pk', 'log_facets_pk'];

async function createMonth(db: AnyDb, lo: number): Promise<void> {
  const hi = monthStart(lo, 1);
  for (const { name } of TABLES) {
    await sql`create table if not exists ${sql.id(`${name}_${suffix(lo)}`)} partition of ${sql.id(name)}
      for values from (${sql.lit(lo)}) to (${sql.lit(hi)})`.execute(db);
  }
}

/** The definitions of a table's indexes but its primary key (and the logs' unique_id constraint). */
async function indexesOf(db: AnyDb, table: string): Promise<string[]> {
  const { rows } = await sql<{ def: string }>`
    select pg_get_indexdef(i.indexrelid) as def from pg_index i join pg_class c on c.oid = i.indexrelid
    where i.indrelid = ${table}::regclass and not i.indisprimary and c.relname <> 'logs_unique_id_key'
    order by i.indexrelid`.execute(db);
  return rows.map((r) => r.def);
}

/** A table's foreign keys as `alter table` statements that add them again. */
async function foreignKeysOf(db: AnyDb, table: string): Promise<string[]> {
  const { rows } = await sql<{ name: string; def: string }>`
    select conname as name, pg_get_constraintdef(oid) as def from pg_constraint
    where conrelid = ${table}::regclass and contype = 'f' order by conname`.execute(db);
  return rows.map((r) => `alter table ${table} add constraint ${r.name} ${r.def}`);
}

/** The UTC months (their first instants) in which a table's rows lie. */
async function monthsOf(db: AnyDb, table: string, column: string): Promise<number[]> {
  const { rows } = await sql<{ month: number }>`
    select distinct (extract(epoch from date_trunc('month', to_timestamp(${sql.ref(column)} / 1000.0) at time zone 'UTC'))
      * 1000)::bigint as month from ${sql.id(table)}`.execute(db);
  return rows.map((r) => Number(r.month));
}

export async function up(db: AnyDb): Promise<void> {
  if (!isPostgres(db)) return;
  // Nothing points at the logs any more: scores, search text and metadata go by trigger (below).
  await sql`alter table scores drop constraint if exists scores_log_id_fkey`.execute(db);
  await sql`alter table log_search drop constraint if exists log_search_log_id_fkey`.execute(db);
  await sql`alter table log_metadata drop constraint if exists log_metadata_log_id_fkey`.execute(db);
  await sql`drop statistics if exists log_metadata_key_value`.execute(db);
  // The sequence outlives the old table: the new one takes it over, its next value unchanged.
  await sql`alter sequence logs_id_seq owned by none`.execute(db);

  const rebuild: string[] = [];
  const months = new Set<number>();
  for (const { name, column, key } of TABLES) {
    rebuild.push(...(await indexesOf(db, name)), ...(await foreignKeysOf(db, name)));
    for (const month of await monthsOf(db, name, column)) months.add(month);
    // The old table steps aside (its other indexes and its foreign keys go when it is dropped).
    await sql`alter table ${sql.id(name)} rename to ${sql.id(`${name}_unpartitioned`)}`.execute(db);
    const pk = KEYS.find((k) => k.startsWith(`${name}_p`));
    if (pk) await sql`alter index ${sql.id(pk)} rename to ${sql.id(`${pk}_unpartitioned`)}`.execute(db);
    await sql`create table ${sql.id(name)} (like ${sql.id(`${name}_unpartitioned`)} including defaults
      ${key ? sql.raw(`, ${key}`) : sql``}) partition by range (${sql.ref(column)})`.execute(db);
  }
  await sql`alter sequence logs_id_seq owned by logs.id`.execute(db);

  // A partition for every month that holds rows, and for this month and the next ones.
  for (let k = 0; k <= MONTHS_AHEAD; k++) months.add(monthStart(Date.now(), k));
  for (const lo of [...months].sort((a, b) => a - b)) await createMonth(db, lo);

  // Each metadata row goes to its log's month: its timestamp is its log's (0003 filled it in).
  await sql`update log_metadata_unpartitioned m set timestamp = l.timestamp from logs_unpartitioned l
    where l.id = m.log_id and m.timestamp <> l.timestamp`.execute(db);
  for (const { name } of TABLES) {
    await sql`insert into ${sql.id(name)} select * from ${sql.id(`${name}_unpartitioned`)}`.execute(db);
  }
  await sql`drop table logs_unpartitioned, log_metadata_unpartitioned, log_facets_unpartitioned,
    log_rollups_unpartitioned`.execute(db);

  // The indexes and foreign keys as they were, now on the partitioned tables (one index per month below).
  for (const statement of rebuild) await sql.raw(statement).execute(db);
  await sql`create index logs_unique_id_idx on logs (unique_id)`.execute(db);
  await sql`create statistics log_metadata_key_value (mcv, dependencies) on key, value_text from log_metadata`.execute(
    db,
  );

  await sql`create table log_unique_ids (unique_id text primary key)`.execute(db);
  await sql`insert into log_unique_ids select unique_id from logs`.execute(db);
  // Set-based triggers: one statement per insert or delete of logs, not one per row.
  await sql`create function gatelog_logs_inserted() returns trigger language plpgsql as $$
    begin
      insert into log_unique_ids (unique_id) select unique_id from inserted;
      return null;
    end $$`.execute(db);
  await sql`create trigger logs_unique_ids after insert on logs
    referencing new table as inserted for each statement execute function gatelog_logs_inserted()`.execute(db);
  // The ids as an array first: `= any(array)` is an index lookup in every month, whatever the planner
  // guesses of a transition table's size.
  await sql`create function gatelog_logs_deleted() returns trigger language plpgsql as $$
    declare
      ids bigint[] := array(select id from deleted);
    begin
      delete from log_unique_ids where unique_id = any(array(select unique_id from deleted));
      delete from scores where log_id = any(ids);
      delete from log_metadata where log_id = any(ids);
      delete from log_search where log_id = any(ids);
      return null;
    end $$`.execute(db);
  await sql`create trigger logs_removals after delete on logs
    referencing old table as deleted for each statement execute function gatelog_logs_deleted()`.execute(db);
}

/** Back to one table each, with the keys and cascades of before (every row kept). */
export async function down(db: AnyDb): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`drop trigger logs_unique_ids on logs`.execute(db);
  await sql`drop trigger logs_removals on logs`.execute(db);
  await sql`drop function gatelog_logs_inserted()`.execute(db);
  await sql`drop function gatelog_logs_deleted()`.execute(db);
  await sql`drop table log_unique_ids`.execute(db);
  await sql`drop statistics if exists log_metadata_key_value`.execute(db);
  await sql`drop index logs_unique_id_idx`.execute(db);
  await sql`alter sequence logs_id_seq owned by none`.execute(db);
  const plainKeys: Record<string, string> = {
    logs: 'constraint logs_pkey primary key (id), constraint logs_unique_id_key unique (unique_id)',
    log_metadata: 'constraint log_metadata_pk primary key (log_id, key)',
    log_facets:
      'constraint log_facets_pk primary key (organization_id, field, grain_ms, bucket_start, is_test, value_text)',
  };
  const rebuild: string[] = [];
  for (const { name } of TABLES) {
    rebuild.push(...(await indexesOf(db, name)), ...(await foreignKeysOf(db, name)));
    await sql`alter table ${sql.id(name)} rename to ${sql.id(`${name}_partitioned`)}`.execute(db);
    const pk = KEYS.find((k) => k.startsWith(`${name}_p`));
    if (pk) await sql`alter index ${sql.id(pk)} rename to ${sql.id(`${pk}_partitioned`)}`.execute(db);
    const key = plainKeys[name];
    await sql`create table ${sql.id(name)} (like ${sql.id(`${name}_partitioned`)} including defaults
      ${key ? sql.raw(`, ${key}`) : sql``})`.execute(db);
    await sql`insert into ${sql.id(name)} select * from ${sql.id(`${name}_partitioned`)}`.execute(db);
  }
  await sql`alter sequence logs_id_seq owned by logs.id`.execute(db);
  await sql`drop table logs_partitioned, log_metadata_partitioned, log_facets_partitioned, log_rollups_partitioned
    cascade`.execute(db);
  for (const statement of rebuild) await sql.raw(statement).execute(db);
  await sql`create statistics log_metadata_key_value (mcv, dependencies) on key, value_text from log_metadata`.execute(
    db,
  );
  for (const table of ['scores', 'log_search', 'log_metadata']) {
    await sql`delete from ${sql.id(table)} t where not exists (select 1 from logs where logs.id = t.log_id)`.execute(
      db,
    );
    await sql`alter table ${sql.id(table)} add foreign key (log_id) references logs(id) on delete cascade`.execute(db);
  }
}
