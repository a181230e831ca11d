/**
 * PostgreSQL's monthly partitions of the logs and what is kept per log or per time bucket — `logs`,
 * `log_metadata`, `log_facets`, `log_rollups`, `log_customer_rollups` (migrations 0032 and 0034,
 * docs/decisions.md "Partitions by month"): one per UTC month of the log's timestamp, made ahead of time
 * (at start-up and by every retention run) and on demand for a log whose month has none yet, so that a
 * late or far-future log is stored like any other.
 */
import { type Kysely, sql } from 'kysely';
import type { Database } from './schema.js';

/** The tables partitioned by month, each month's partitions named `<table>_p<yyyymm>`. */
export const PARTITIONED_TABLES = [
  'logs',
  'log_metadata',
  'log_facets',
  'log_rollups',
  'log_customer_rollups',
] as const;
/** Months after the current one that always have their partitions. */
export const MONTHS_AHEAD = 2;

export interface LogMonth {
  /** First instant of the month, epoch ms (inclusive). */
  lo: number;
  /** First instant of the next month (exclusive). */
  hi: number;
}

/** The first instant (epoch ms) of the UTC month holding `ms`, or of `months` later. */
export function monthStart(ms: number, months = 0): number {
  const d = new Date(ms);
  // Not Date.UTC: it reads the years 0 to 99 as 1900 to 1999.
  const start = new Date(0);
  start.setUTCFullYear(d.getUTCFullYear(), d.getUTCMonth() + months, 1);
  return start.getTime();
}

/** The partition of `table` holding month `lo`: logs_p202601 (pm000101 before year 0). */
export function partitionName(table: string, lo: number): string {
  const d = new Date(lo);
  const y = d.getUTCFullYear();
  const month = String(d.getUTCMonth() + 1).padStart(2, '0');
  return `${table}_p${y < 0 ? 'm' : ''}${String(Math.abs(y)).padStart(4, '0')}${month}`;
}

/** The month (its first instant) a partition named by partitionName holds, or null for another name. */
export function monthOfPartition(name: string): number | null {
  const m = /_p(m?)(\d{4})(\d{2})$/.exec(name);
  if (!m) return null;
  const start = new Date(0);
  start.setUTCFullYear((m[1] ? -1 : 1) * Number(m[2]), Number(m[3]) - 1, 1);
  return start.getTime();
}

/** A relation already there, or made at the same moment by another node (a race of IF NOT EXISTS). */
function alreadyMade(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code;
  return code === '42P07' || code === '23505';
}

/**
 * The statistics a month's metadata partition keeps on its keys and values together (migration 0035):
 * without them the planner takes `key = 'region'` and `value_text = 'eu-west'` as independent and
 * expects a common value's rows to be a few (20,000 for 144,000 in a week of a million logs), then
 * joins them to the logs one by one (facet counts under a metadata filter: 909 → 572 ms). A partition is
 * planned with its own statistics, so each has them; the name is the partition's, made once.
 */
export function metadataStatistics(partition: string) {
  return sql`create statistics if not exists ${sql.id(`${partition}_kv`)} (mcv, dependencies)
    on organization_id, key, value_text from ${sql.id(partition)}`;
}

/** Makes the month's partitions of every partitioned table unless they exist. */
export async function createMonth(db: Kysely<Database>, lo: number): Promise<void> {
  const hi = monthStart(lo, 1);
  for (const table of PARTITIONED_TABLES) {
    const partition = partitionName(table, lo);
    try {
      await sql`create table if not exists ${sql.id(partition)} partition of ${sql.id(table)}
        for values from (${sql.lit(lo)}) to (${sql.lit(hi)})`.execute(db);
      if (table === 'log_metadata') await metadataStatistics(partition).execute(db);
    } catch (err) {
      if (!alreadyMade(err)) throw err;
    }
  }
}

/** The months of the logs' partitions, oldest first. */
export async function logMonths(db: Kysely<Database>): Promise<LogMonth[]> {
  const { rows } = await sql<{ bound: string }>`
    select pg_get_expr(c.relpartbound, c.oid) as bound from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'logs'::regclass`.execute(db);
  const months: LogMonth[] = [];
  for (const { bound } of rows) {
    const m = /FROM \('?(-?\d+)'?\) TO \('?(-?\d+)'?\)/.exec(bound);
    if (m) months.push({ lo: Number(m[1]), hi: Number(m[2]) });
  }
  return months.sort((a, b) => a.lo - b.lo);
}

/** Makes the partitions of this month and the next MONTHS_AHEAD that are missing. */
export async function createMonthsAhead(db: Kysely<Database>, now = Date.now()): Promise<void> {
  const have = new Set((await logMonths(db)).map((m) => m.lo));
  for (let k = 0; k <= MONTHS_AHEAD; k++) {
    const lo = monthStart(now, k);
    if (!have.has(lo)) await createMonth(db, lo);
  }
}

/** Makes the partitions the given timestamps' months lack (a batch of logs about to be written). */
export async function createMonthsOf(db: Kysely<Database>, timestamps: Iterable<number>): Promise<void> {
  const have = new Set((await logMonths(db)).map((m) => m.lo));
  for (const lo of new Set([...timestamps].map((t) => monthStart(t)))) {
    if (!have.has(lo)) await createMonth(db, lo);
  }
}

/** Whether an insert failed because a row's month has no partition ("no partition of relation … found"). */
export function isMissingPartition(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  return e?.code === '23514' && /no partition of relation/.test(e.message ?? '');
}
