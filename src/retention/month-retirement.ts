/**
 * Retention by whole months on PostgreSQL (docs/decisions.md "Partitions by month"): a month of logs
 * past every organization's retention — no organization that keeps it has a log in it — is detached
 * from `logs` in one short transaction, and its partitions of log_metadata, log_facets and log_rollups
 * dropped with it (the facet counts and rollups of its buckets are its logs' alone: a bucket, a day at
 * most, lies in one UTC month). The detached table, renamed `logs_retired_p<yyyymm>`, is then walked in
 * batches to delete what hung off its logs elsewhere (scores, search text, unique_ids: none of them is
 * read without its log) and dropped. Organizations with a shorter retention still lose their logs row
 * by row (log-removal.ts) meanwhile.
 */
import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/schema.js';
import { type LogMonth, logMonths, PARTITIONED_TABLES, partitionName } from '../db/log-partitions.js';

/**
 * How long the detachment waits for each table's lock (running queries hold it); past that it gives up
 * and the next run tries again, so that reads and writes never queue behind it for longer. Below
 * PostgreSQL's deadlock_timeout (1 s): a query that holds one of the four tables and waits for another
 * is let go before the deadlock check could pick it to fail.
 */
const LOCK_WAIT_MS = 500;
/** Retired logs walked per batch. */
const RETIRED_BATCH = 5_000;
const RETIRED_PREFIX = 'logs_retired_';

/** An organization's deletion cut-off (null: its logs are kept forever). */
export interface OrganizationCutoff {
  organizationId: string;
  deleteBefore: number | null;
}

/** Thrown inside the detaching transaction to roll it back: a kept log showed up in the month. */
class MonthStillHeld extends Error {}

/**
 * Detaches every month wholly past retention; answers the months detached. A month some organization
 * keeps that has a log in it stays (its expired logs go row by row).
 */
export async function retireExpiredMonths(db: Kysely<Database>, cutoffs: OrganizationCutoff[]): Promise<LogMonth[]> {
  const retired: LogMonth[] = [];
  for (const month of await logMonths(db)) {
    const keeping = cutoffs
      .filter((c) => c.deleteBefore === null || c.deleteBefore < month.hi)
      .map((c) => c.organizationId);
    // Only months some organization lets go at all, and that every organization with a log in it lets go.
    if (keeping.length === cutoffs.length) continue;
    const table = partitionName('logs', month.lo);
    if (await holdsLogsOf(db, table, keeping)) continue;
    try {
      await db.transaction().execute(async (trx) => {
        await sql`set local lock_timeout = ${sql.lit(`${LOCK_WAIT_MS}ms`)}`.execute(trx);
        // The logs first: no log enters the month from here on; then checked again, for good.
        await sql`alter table logs detach partition ${sql.id(table)}`.execute(trx);
        if (await holdsLogsOf(trx, table, keeping)) throw new MonthStillHeld();
        for (const side of PARTITIONED_TABLES.filter((t) => t !== 'logs')) {
          const partition = partitionName(side, month.lo);
          await sql`alter table ${sql.id(side)} detach partition ${sql.id(partition)}`.execute(trx);
          await sql`drop table ${sql.id(partition)}`.execute(trx);
        }
        await sql`alter table ${sql.id(table)} rename to ${sql.id(RETIRED_PREFIX + table.slice('logs_'.length))}`.execute(
          trx,
        );
      });
      retired.push(month);
    } catch (err) {
      // A kept log came in, or the lock was not had in time: the month stays, for the next run.
      const code = (err as { code?: string } | null)?.code;
      if (!(err instanceof MonthStillHeld) && code !== '55P03') throw err;
    }
  }
  return retired;
}

async function holdsLogsOf(db: Kysely<Database>, table: string, organizations: string[]): Promise<boolean> {
  if (organizations.length === 0) return false;
  const { rows } = await sql<{ held: boolean }>`select exists (select 1 from ${sql.id(table)}
    where organization_id = any(${organizations})) as held`.execute(db);
  return rows[0]?.held === true;
}

/**
 * Walks the retired months' logs, deleting what hung off them, batch by batch while `inBudget`, and
 * drops each retired table once walked. Answers how many retired logs it went through, and whether
 * none is left. Walked again from the start after a restart: deleting what is already gone is harmless.
 */
export async function clearRetiredMonths(
  db: Kysely<Database>,
  inBudget: () => boolean,
  batch: (work: () => Promise<boolean>) => Promise<boolean>,
  cursors: Map<string, number>,
): Promise<{ logs: number; done: boolean }> {
  let logs = 0;
  const { rows } = await sql<{ name: string }>`select relname as name from pg_class
    where relkind = 'r' and relname like ${`${RETIRED_PREFIX}%`} and relnamespace = current_schema()::regnamespace
    order by relname`.execute(db);
  for (const { name } of rows) {
    if (!inBudget()) return { logs, done: false };
    const walked = await batch(async () => {
      const after = cursors.get(name) ?? Number.MIN_SAFE_INTEGER;
      const { rows: gone } = await sql<{ n: number; last: number | null }>`
        with gone as (select id, unique_id from ${sql.id(name)} where id > ${after} order by id limit ${RETIRED_BATCH}),
          s as (delete from scores where log_id in (select id from gone)),
          q as (delete from log_search where log_id in (select id from gone)),
          u as (delete from log_unique_ids where unique_id in (select unique_id from gone))
        select count(*)::int as n, max(id) as last from gone`.execute(db);
      const { n, last } = gone[0];
      logs += n;
      if (last !== null) cursors.set(name, Number(last));
      if (n < RETIRED_BATCH) {
        await sql`drop table ${sql.id(name)}`.execute(db);
        cursors.delete(name);
        return true;
      }
      return false;
    });
    if (!walked) return { logs, done: false };
  }
  return { logs, done: true };
}
