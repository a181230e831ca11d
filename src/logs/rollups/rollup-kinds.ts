/**
 * The rollup tables and what each holds (docs/decisions.md "Rollups for long summaries"). Both are kept
 * by the same deltas (rollup-deltas.ts), written by the same upsert (rollup-writes.ts) and read by the
 * same summary (rollup-summary.ts); they differ in their dimensions, grains and sketches:
 *
 * - `log_rollups`: per minute, hour and day, per combination of the few-valued fields a summary groups
 *   and filters by most, with sketches of latency and time to first token;
 * - `log_customer_rollups`: per hour and day, per customer (thousands of values: per minute the rows
 *   would be about as many as the logs), log type and environment; counts and sums only (a customer's
 *   percentiles are read from the logs).
 */
import { METRIC_COLUMNS } from '../summary/request.js';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/** The log columns a `log_rollups` row is per value of (its key, with the organization, grain and bucket). */
export const ROLLUP_DIMENSIONS = [
  'is_test',
  'environment',
  'model',
  'provider_id',
  'organization_key_name',
  'log_type',
  'status',
  'status_code',
  'cache_hit',
] as const;

/**
 * The log columns a `log_customer_rollups` row is per value of: the customer, and what the dashboard's
 * top customers filter by (the environment scope, and log type: it counts model calls only).
 */
export const CUSTOMER_ROLLUP_DIMENSIONS = ['is_test', 'environment', 'log_type', 'customer_identifier'] as const;

export type RollupDimension = (typeof ROLLUP_DIMENSIONS)[number] | (typeof CUSTOMER_ROLLUP_DIMENSIONS)[number];

/** The metric fields summed (each with the number of logs that have a value): the summary's metric columns. */
export const SUMMED_FIELDS = METRIC_COLUMNS;

/** The fields whose values `log_rollups` keeps in sketches: their percentiles, minimum and maximum. */
export const SKETCHED_FIELDS = ['latency', 'time_to_first_token'] as const;

export type SummedField = (typeof SUMMED_FIELDS)[number];
export type SketchedField = (typeof SKETCHED_FIELDS)[number];

/** One rollup table: its rows' key and what they hold. */
export interface RollupKind {
  table: 'log_rollups' | 'log_customer_rollups';
  /** Its row in rollup_backfill (the stored logs it does not hold yet). */
  backfillId: number;
  /** The log columns of its key, in the order its deltas hold their values. */
  dimensions: readonly RollupDimension[];
  /** Its buckets' lengths, smallest first. */
  grains: readonly number[];
  /** The SKETCHED_FIELDS it keeps sketches of (the others: none). */
  sketched: readonly SketchedField[];
  /** Its key columns: organization, grain, bucket, dimensions. */
  keyColumns: readonly string[];
  /** Its value columns, in the order deltaRow writes them. */
  valueColumns: readonly string[];
  /**
   * A summary reads it, left to itself, only where its rows stand for this many logs each on average
   * (rollup-plan.ts rollupsFaster): a row costs more than a log to read.
   */
  minLogsPerRow: number;
  /**
   * Its groups are many (customers): a grouped summary ranks them from one row per group first, then
   * reads only the top ones per bucket (rollup-summary.ts) — per bucket and group, the rows read would be
   * the groups times the buckets.
   */
  rankFirst: boolean;
}

/** A table's description, its column lists derived from its dimensions and sketches. */
function kind(k: Omit<RollupKind, 'keyColumns' | 'valueColumns'>): RollupKind {
  return {
    ...k,
    keyColumns: ['organization_id', 'grain_ms', 'bucket_start', ...k.dimensions],
    valueColumns: [
      'log_count',
      'failed_count',
      ...SUMMED_FIELDS.flatMap((f) => [`${f}_n`, `${f}_sum`]),
      ...k.sketched.map((f) => `${f}_bins`),
    ],
  };
}

/**
 * Measured on a 1M-log SQLite store over 30 days (bench/README.md `rollup-read`): a week's hour rows,
 * 12.5 logs each, read in 0.65–0.8 of the logs' time; a day's or 6 hours' minute rows, 1.3 logs each, in
 * 2–3 times it — most of a row's cost its sketch, merged in JavaScript.
 */
export const LOG_ROLLUPS = kind({
  table: 'log_rollups',
  backfillId: 1,
  dimensions: ROLLUP_DIMENSIONS,
  grains: [MINUTE_MS, HOUR_MS, DAY_MS],
  sketched: SKETCHED_FIELDS,
  minLogsPerRow: 10,
  rankFirst: false,
});

/** No sketch to merge; the line of 2 logs a row is not yet measured on a dense store (bench/README.md `rollup-read`). */
export const CUSTOMER_ROLLUPS = kind({
  table: 'log_customer_rollups',
  backfillId: 2,
  dimensions: CUSTOMER_ROLLUP_DIMENSIONS,
  grains: [HOUR_MS, DAY_MS],
  sketched: [],
  minLogsPerRow: 2,
  rankFirst: true,
});

/** Every rollup table, in the order a summary tries them (the first that can answer is read). */
export const ROLLUP_KINDS: readonly RollupKind[] = [LOG_ROLLUPS, CUSTOMER_ROLLUPS];

/** The log columns the rollups read from a log: every kind's dimensions and the summed fields. */
export const ROLLUP_SOURCE_COLUMNS = [
  'organization_id',
  'timestamp',
  ...new Set(ROLLUP_KINDS.flatMap((k) => k.dimensions)),
  ...SUMMED_FIELDS,
] as readonly ('organization_id' | 'timestamp' | RollupDimension | SummedField)[];
