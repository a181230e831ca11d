/**
 * PostgreSQL: statistics on the metadata's keys and values together, on every month's partition of
 * log_metadata (src/db/log-partitions.ts `metadataStatistics` makes them for the months to come), and
 * those partitions analyzed so that the planner has them at once: a filter on a common metadata value
 * was expected to keep a few rows, and its logs were joined one by one. SQLite: nothing.
 */
import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../dialect.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  const { rows } = await sql<{ name: string }>`
    select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'log_metadata'::regclass`.execute(db);
  for (const { name } of rows) {
    await sql`create statistics if not exists ${sql.id(`${name}_kv`)} (mcv, dependencies)
      on organization_id, key, value_text from ${sql.id(name)}`.execute(db);
    // A sample of the partition's rows (analyze reads at most 30,000 pages of it), not all of them.
    await sql`analyze ${sql.id(name)}`.execute(db);
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
export async function down(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  const { rows } = await sql<{ name: string }>`
    select s.stxname as name from pg_statistic_ext s join pg_inherits i on i.inhrelid = s.stxrelid
    where i.inhparent = 'log_metadata'::regclass and s.stxname like '%\\_kv'`.execute(db);
  for (const { name } of rows) await sql`drop statistics if exists ${sql.id(name)}`.execute(db);
}
