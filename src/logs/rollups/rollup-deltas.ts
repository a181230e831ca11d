/**
 * Rollups: what the logs of one organization add up to per time bucket (a minute, an hour, a day) and
 * per combination of the fields a summary groups and filters by most — counts, failures, sums of every
 * metric field, and sketches (sketch.ts) of latency and time to first token. A summary over a long range
 * reads a few thousand of these rows instead of every log of the range (docs/api.md "Analytics").
 *
 * They change in the same transaction as the logs they sum, by deltas: logs written add theirs, logs
 * deleted (by their route or by retention) take theirs away, so a late log (a past timestamp) lands in
 * its bucket and a deleted one leaves it, whatever the order.
 */
import type { LogsTable } from '../../db/schema.js';
import { METRIC_COLUMNS } from '../summary/request.js';
import { type Bins, binOf, encodeBins } from './sketch.js';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
export const ROLLUP_GRAINS = [MINUTE_MS, HOUR_MS, DAY_MS] as const;

/** The log columns a rollup row is per value of (its key, with the organization, grain and bucket). */
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

/** The metric fields summed (each with the number of logs that have a value): the summary's metric columns. */
export const SUMMED_FIELDS = METRIC_COLUMNS;

/** The fields whose values are kept in sketches: their percentiles, minimum and maximum come from rollups. */
export const SKETCHED_FIELDS = ['latency', 'time_to_first_token'] as const;

export type SummedField = (typeof SUMMED_FIELDS)[number];
export type SketchedField = (typeof SKETCHED_FIELDS)[number];

/** What a log contributes to the rollups: these columns of its row. */
export type RollupSource = Pick<
  LogsTable,
  'organization_id' | 'timestamp' | (typeof ROLLUP_DIMENSIONS)[number] | SummedField
>;

/** The columns rollups read from a stored log (for a delete, or for filling rollups of older logs). */
export const ROLLUP_SOURCE_COLUMNS = ['organization_id', 'timestamp', ...ROLLUP_DIMENSIONS, ...SUMMED_FIELDS] as const;

/** One rollup row's change: its key, and what is added to each of its sums (negative: taken away). */
export interface RollupDelta {
  organization_id: string;
  grain_ms: number;
  bucket_start: number;
  /** The dimension values, in ROLLUP_DIMENSIONS order. */
  dims: (string | number)[];
  log_count: number;
  failed_count: number;
  /** Per SUMMED_FIELDS entry: [logs with a value, sum of the values]. */
  sums: [number, number][];
  /** Per SKETCHED_FIELDS entry. */
  bins: Bins[];
}

/** A delta as the row written with it: column → value, the sketches encoded. */
export function deltaRow(d: RollupDelta): Record<string, string | number> {
  const row: Record<string, string | number> = {
    organization_id: d.organization_id,
    grain_ms: d.grain_ms,
    bucket_start: d.bucket_start,
  };
  ROLLUP_DIMENSIONS.forEach((name, i) => (row[name] = d.dims[i]));
  row.log_count = d.log_count;
  row.failed_count = d.failed_count;
  SUMMED_FIELDS.forEach((name, i) => {
    row[`${name}_n`] = d.sums[i][0];
    row[`${name}_sum`] = d.sums[i][1];
  });
  SKETCHED_FIELDS.forEach((name, i) => (row[`${name}_bins`] = encodeBins(d.bins[i])));
  return row;
}

/** The column names of deltaRow, in its order. */
export const ROLLUP_VALUE_COLUMNS = [
  'log_count',
  'failed_count',
  ...SUMMED_FIELDS.flatMap((f) => [`${f}_n`, `${f}_sum`]),
  ...SKETCHED_FIELDS.map((f) => `${f}_bins`),
];
export const ROLLUP_KEY_COLUMNS = ['organization_id', 'grain_ms', 'bucket_start', ...ROLLUP_DIMENSIONS];

const bucketOf = (timestamp: number, grain: number) => Math.floor(timestamp / grain) * grain;

const newDelta = (log: RollupSource, grain: number, dims: (string | number)[]): RollupDelta => ({
  organization_id: log.organization_id,
  grain_ms: grain,
  bucket_start: bucketOf(log.timestamp, grain),
  dims,
  log_count: 0,
  failed_count: 0,
  sums: SUMMED_FIELDS.map(() => [0, 0]),
  bins: SKETCHED_FIELDS.map(() => new Map()),
});

/**
 * The changes to the rollups for adding some logs and removing others, one per distinct row, in a fixed
 * order: concurrent writers then lock rows in the same order (no deadlock).
 */
export function rollupDeltas(added: readonly RollupSource[], removed: readonly RollupSource[] = []): RollupDelta[] {
  // The rows of a log are found by one key per log — its organization, minute and dimensions, which
  // name its hour's and day's rows too — and each log's values are added to its three rows in plain
  // loops: this runs for every log written, on the log-writing thread.
  const rowsOfMinute = new Map<string, RollupDelta[]>();
  const rows = new Map<string, RollupDelta>();
  const rowFor = (log: RollupSource, grain: number, dims: (string | number)[], dimsKey: string) => {
    const key = `${grain}:${bucketOf(log.timestamp, grain)}:${dimsKey}`;
    let row = rows.get(key);
    if (!row) rows.set(key, (row = newDelta(log, grain, dims)));
    return row;
  };
  const bins: string[] = new Array(SKETCHED_FIELDS.length);
  const count = (logs: readonly RollupSource[], sign: number) => {
    for (const log of logs) {
      const org = log.organization_id;
      // Lengths keep the key unambiguous whatever characters the text dimensions hold.
      let dimsKey = `${org.length}:${org}`;
      for (const d of ROLLUP_DIMENSIONS) {
        const text = String(log[d]);
        dimsKey += `${text.length}:${text}`;
      }
      const minuteKey = `${Math.floor(log.timestamp / MINUTE_MS)}:${dimsKey}`;
      let targets = rowsOfMinute.get(minuteKey);
      if (!targets) {
        const dims = ROLLUP_DIMENSIONS.map((d) => log[d]);
        targets = ROLLUP_GRAINS.map((grain) => rowFor(log, grain, dims, dimsKey));
        rowsOfMinute.set(minuteKey, targets);
      }
      const failed = log.status_code >= 400 ? sign : 0;
      for (let k = 0; k < SKETCHED_FIELDS.length; k++) {
        const value = log[SKETCHED_FIELDS[k]];
        bins[k] = value === null || value === undefined ? '' : binOf(Number(value));
      }
      for (const row of targets) {
        row.log_count += sign;
        row.failed_count += failed;
        for (let i = 0; i < SUMMED_FIELDS.length; i++) {
          const value = log[SUMMED_FIELDS[i]];
          if (value === null || value === undefined) continue;
          row.sums[i][0] += sign;
          row.sums[i][1] += sign * Number(value);
        }
        for (let k = 0; k < bins.length; k++) {
          if (bins[k] === '') continue;
          const map = row.bins[k];
          map.set(bins[k], (map.get(bins[k]) ?? 0) + sign);
        }
      }
    }
  };
  count(added, 1);
  count(removed, -1);
  return [...rows.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, d]) => d)
    .filter((d) => !isEmpty(d));
}

/** A delta that changes nothing (a log removed and added back as it was). */
const isEmpty = (d: RollupDelta) =>
  d.log_count === 0 &&
  d.failed_count === 0 &&
  d.sums.every(([n, sum]) => n === 0 && sum === 0) &&
  d.bins.every((bins) => [...bins.values()].every((n) => n === 0));
