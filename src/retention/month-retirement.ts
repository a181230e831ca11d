/**
 * Retention by whole months on PostgreSQL (docs/decisions.md "Partitions by month"): a month of logs
 * past every organization's retention — no organization that keeps it has a log in it — is detached
 * from `logs` in one short transaction, and its partitions of the other PARTITIONED_TABLES
 * (log_metadata, log_facets, log_rollups, log_customer_rollups) with it (the facet counts and rollups
 * of its buckets are its logs' alone: a bucket, a day at most, lies in one UTC month). The detached
 * tables are renamed (`logs_retired_p<yyyymm>`, `log_metadata_retired_p<yyyymm>`…) and dropped by the
 * walk that follows (retired-walk.ts), not in that transaction: PostgreSQL deletes a dropped table's
 * files as its transaction commits, before it lets go of its locks, and for a month of 10M logs (15 GB
 * of side partitions) that held every write to the logs for 3.6 s (bench/README.md "retention").
 * Organizations with a shorter retention still lose their logs row by row (log-removal.ts) meanwhile.
 *
 * A detachment that does not get its lock in time is tried again a while later; the month's logs wait
 * for it (deleting them by rows would spend on a whole month what the detachment does in a moment). On a
 * database so busy that it fails DETACH_TRIES times in a row, the month goes by rows like any expired
 * log. What happened to each month is in the sweep's report (`months`). The counts of tries are kept in
 * log_month_retirements (migration 0033), so that a restart or another node goes on from them.
 */
import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/schema.js';
import { type LogMonth, logMonths, PARTITIONED_TABLES, partitionName } from '../db/log-partitions.js';

/**
 * How long the detachment waits for each table's lock (running queries hold it); past that it gives up
 * and a later run tries again, so that reads and writes never queue behind it for longer. Below
 * PostgreSQL's deadlock_timeout (1 s): a query that holds one of the four tables and waits for another
 * is let go before the deadlock check could pick it to fail.
 */
const LOCK_WAIT_MS = 500;
export const RETIRED_PREFIX = 'logs_retired_';

export interface RetirementTuning {
  /** Failed detachments in a row after which the month's logs go by rows. */
  detachTries: number;
  /** The least time between two tries at detaching one month: a busy database waits 500 ms that often. */
  detachRetryMs: number;
  /** Retired logs walked per batch. */
  walkBatch: number;
  /** Batches of the walk per run (a seam for tests: a walk stopped half-way, as by a restart). */
  walkBatchesPerRun: number;
}

/** About an hour of tries, 500 ms of waiting each, before a month goes by rows. */
export const RETIREMENT: RetirementTuning = {
  detachTries: 6,
  detachRetryMs: 600_000,
  walkBatch: 5_000,
  walkBatchesPerRun: Number.POSITIVE_INFINITY,
};

/**
 * What a run did with a month past every retention: `detached` whole; `busy`, its detachment did not get
 * its lock (tried again later, its logs kept until then); `by_rows`, it failed DETACH_TRIES times in a
 * row and the month's logs go by rows meanwhile (its detachment is still tried now and then).
 */
export type MonthWay = 'detached' | 'busy' | 'by_rows';

export interface MonthOutcome extends LogMonth {
  way: MonthWay;
  /** Whether this run tried to detach it (false: its last try was too recent). */
  tried: boolean;
}

/** An organization's deletion cut-off (null: its logs are kept forever). */
export interface OrganizationCutoff {
  organizationId: string;
  deleteBefore: number | null;
}

/** Thrown inside the detaching transaction to roll it back: a kept log showed up in the month. */
class MonthStillHeld extends Error {}

/**
 * Tries to detach every month wholly past retention (but those tried less than detachRetryMs ago);
 * answers what became of each. A month some organization keeps that has a log in it is left out (its
 * expired logs go by rows).
 */
export async function retireExpiredMonths(
  db: Kysely<Database>,
  cutoffs: OrganizationCutoff[],
  now: number,
  tuning: RetirementTuning,
): Promise<MonthOutcome[]> {
  const outcomes: MonthOutcome[] = [];
  const tries = new Map(
    (
      await sql<{ month: string; failed_detaches: number; tried_at: string }>`select month, failed_detaches, tried_at
        from log_month_retirements where walked_to is null`.execute(db)
    ).rows.map((r) => [Number(r.month), { failed: r.failed_detaches, at: Number(r.tried_at) }]),
  );
  const retired = new Set(await retiredTables(db));
  for (const month of await logMonths(db)) {
    const keeping = cutoffs
      .filter((c) => c.deleteBefore === null || c.deleteBefore < month.hi)
      .map((c) => c.organizationId);
    // Only months some organization lets go at all, and that every organization with a log in it lets go.
    if (keeping.length === cutoffs.length) continue;
    const table = partitionName('logs', month.lo);
    // The same month retired before (a late log made it again) is walked away first.
    if (retired.has(retiredName(month.lo))) continue;
    if (await holdsLogsOf(db, table, keeping)) continue;
    const last = tries.get(month.lo);
    let failed = last?.failed ?? 0;
    const tried = failed === 0 || now - last!.at >= tuning.detachRetryMs;
    if (tried) {
      const outcome = await detach(db, month, keeping, now);
      if (outcome === 'held') continue;
      if (outcome === 'detached') {
        outcomes.push({ ...month, way: 'detached', tried });
        continue;
      }
      failed += 1;
      await sql`insert into log_month_retirements (month, failed_detaches, tried_at) values (${month.lo}, ${failed},
        ${now}) on conflict (month) do update set failed_detaches = excluded.failed_detaches,
        tried_at = excluded.tried_at`.execute(db);
    }
    outcomes.push({ ...month, way: failed >= tuning.detachTries ? 'by_rows' : 'busy', tried });
  }
  return outcomes;
}

/** The logs' partition of a month once detached and renamed. */
export function retiredName(lo: number): string {
  return RETIRED_PREFIX + partitionName('logs', lo).slice('logs_'.length);
}

/** The partitions of the other PARTITIONED_TABLES, detached with a month's logs. */
export const SIDE_TABLES = PARTITIONED_TABLES.filter((t) => t !== 'logs');

/** A side table's partition of a month once detached and renamed: dropped by the walk. */
export function retiredSideName(side: (typeof SIDE_TABLES)[number], lo: number): string {
  return `${side}_retired_${partitionName(side, lo).slice(side.length + 1)}`;
}

/** The retired side tables left to drop. */
export async function retiredSideTables(db: Kysely<Database>): Promise<string[]> {
  // LIKE patterns: `_` is a wildcard unless escaped.
  const names = SIDE_TABLES.map((side) => `${side}_retired_p`.replaceAll('_', '\\_') + '%');
  const { rows } = await sql<{ name: string }>`select relname as name from pg_class
    where relkind = 'r' and relname like any(${names}) and relnamespace = current_schema()::regnamespace
    order by relname`.execute(db);
  return rows.map((r) => r.name);
}

/** The retired tables left to walk, oldest month first. */
export async function retiredTables(db: Kysely<Database>): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select relname as name from pg_class
    where relkind = 'r' and relname like ${`${RETIRED_PREFIX}%`} and relnamespace = current_schema()::regnamespace
    order by relname`.execute(db);
  return rows.map((r) => r.name);
}

/**
 * The month's partitions detached in one transaction and renamed as retired, and the walk of its logs
 * noted as to begin; 'busy' when a lock was not had in time, 'held' when a log some organization keeps
 * came in meanwhile (rolled back either way).
 */
async function detach(
  db: Kysely<Database>,
  month: LogMonth,
  keeping: string[],
  now: number,
): Promise<'detached' | 'busy' | 'held'> {
  const table = partitionName('logs', month.lo);
  try {
    await db.transaction().execute(async (trx) => {
      await sql`set local lock_timeout = ${sql.lit(`${LOCK_WAIT_MS}ms`)}`.execute(trx);
      // The logs first: no log enters the month from here on; then checked again, for good.
      await sql`alter table logs detach partition ${sql.id(table)}`.execute(trx);
      if (await holdsLogsOf(trx, table, keeping)) throw new MonthStillHeld();
      for (const side of SIDE_TABLES) {
        const partition = partitionName(side, month.lo);
        const retired = retiredSideName(side, month.lo);
        await sql`alter table ${sql.id(side)} detach partition ${sql.id(partition)}`.execute(trx);
        // Left by nothing but a walk that never finished: its drop would delete files here, under the locks.
        await sql`drop table if exists ${sql.id(retired)}`.execute(trx);
        await sql`alter table ${sql.id(partition)} rename to ${sql.id(retired)}`.execute(trx);
      }
      await sql`alter table ${sql.id(table)} rename to ${sql.id(retiredName(month.lo))}`.execute(trx);
      // The walk's start, with the detachment or not at all (walked_to below every id: none walked yet).
      await sql`insert into log_month_retirements (month, failed_detaches, tried_at, walked_to)
        values (${month.lo}, 0, ${now}, ${Number.MIN_SAFE_INTEGER}) on conflict (month) do update
        set failed_detaches = 0, tried_at = excluded.tried_at, walked_to = excluded.walked_to`.execute(trx);
    });
    return 'detached';
  } catch (err) {
    if (err instanceof MonthStillHeld) return 'held';
    // 55P03: lock_timeout (the lock was not had in time).
    if ((err as { code?: string } | null)?.code === '55P03') return 'busy';
    throw err;
  }
}

async function holdsLogsOf(db: Kysely<Database>, table: string, organizations: string[]): Promise<boolean> {
  if (organizations.length === 0) return false;
  const { rows } = await sql<{ held: boolean }>`select exists (select 1 from ${sql.id(table)}
    where organization_id = any(${organizations})) as held`.execute(db);
  return rows[0]?.held === true;
}
