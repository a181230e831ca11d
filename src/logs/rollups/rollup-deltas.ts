/**
 * Rollups: what the logs of one organization add up to per time bucket and per combination of some of
 * their fields (rollup-kinds.ts: one table per set of fields) — counts, failures, sums of every metric
 * field, and sketches (sketch.ts) of latency and time to first token. A summary over a long range reads a
 * few thousand of these rows instead of every log of the range (docs/api.md "Analytics").
 *
 * They change in the same transaction as the logs they sum, by deltas: logs written add theirs, logs
 * deleted (by their route or by retention) take theirs away, so a late log (a past timestamp) lands in
 * its bucket and a deleted one leaves it, whatever the order.
 */
import type { LogsTable } from '../../db/schema.js';
import { type Bins, binOf, encodeBins } from './sketch.js';
import { LOG_ROLLUPS, ROLLUP_KINDS, ROLLUP_SOURCE_COLUMNS, type RollupKind, SUMMED_FIELDS } from './rollup-kinds.js';

export {
  CUSTOMER_ROLLUPS,
  DAY_MS,
  HOUR_MS,
  LOG_ROLLUPS,
  MINUTE_MS,
  ROLLUP_DIMENSIONS,
  ROLLUP_KINDS,
  ROLLUP_SOURCE_COLUMNS,
  type RollupKind,
  SKETCHED_FIELDS,
  type SketchedField,
  SUMMED_FIELDS,
  type SummedField,
} from './rollup-kinds.js';

/** The grains of `log_rollups`. */
export const ROLLUP_GRAINS = LOG_ROLLUPS.grains;

/** What a log contributes to the rollups: these columns of its row. */
export type RollupSource = Pick<LogsTable, (typeof ROLLUP_SOURCE_COLUMNS)[number]>;

/** One rollup row's change: its table and key, and what is added to each of its sums (negative: taken away). */
export interface RollupDelta {
  kind: RollupKind;
  organization_id: string;
  grain_ms: number;
  bucket_start: number;
  /** The dimension values, in kind.dimensions order. */
  dims: (string | number)[];
  log_count: number;
  failed_count: number;
  /** Per SUMMED_FIELDS entry: [logs with a value, sum of the values]. */
  sums: [number, number][];
  /** Per kind.sketched entry. */
  bins: Bins[];
}

/** A delta as the row written with it: column → value, the sketches encoded. */
export function deltaRow(d: RollupDelta): Record<string, string | number> {
  const row: Record<string, string | number> = {
    organization_id: d.organization_id,
    grain_ms: d.grain_ms,
    bucket_start: d.bucket_start,
  };
  d.kind.dimensions.forEach((name, i) => (row[name] = d.dims[i]));
  row.log_count = d.log_count;
  row.failed_count = d.failed_count;
  SUMMED_FIELDS.forEach((name, i) => {
    row[`${name}_n`] = d.sums[i][0];
    row[`${name}_sum`] = d.sums[i][1];
  });
  d.kind.sketched.forEach((name, i) => (row[`${name}_bins`] = encodeBins(d.bins[i])));
  return row;
}

/** The value and key columns of `log_rollups` (deltaRow's, in its order). */
export const ROLLUP_VALUE_COLUMNS = LOG_ROLLUPS.valueColumns;
export const ROLLUP_KEY_COLUMNS = LOG_ROLLUPS.keyColumns;

const bucketOf = (timestamp: number, grain: number) => Math.floor(timestamp / grain) * grain;

const newDelta = (kind: RollupKind, log: RollupSource, grain: number, dims: (string | number)[]): RollupDelta => ({
  kind,
  organization_id: log.organization_id,
  grain_ms: grain,
  bucket_start: bucketOf(log.timestamp, grain),
  dims,
  log_count: 0,
  failed_count: 0,
  sums: SUMMED_FIELDS.map(() => [0, 0]),
  bins: kind.sketched.map(() => new Map()),
});

/** One kind's deltas, keyed by `${grain}:${bucket}:${dimensions}`, added to `rows`. */
function countKind(
  kind: RollupKind,
  rows: Map<string, RollupDelta>,
  added: readonly RollupSource[],
  removed: readonly RollupSource[],
): void {
  // The rows of a log are found by one key per log — its organization, smallest bucket and dimensions,
  // which name its larger buckets' rows too — and each log's values are added to its rows in plain
  // loops: this runs for every log written, on the log-writing thread.
  const smallest = kind.grains[0];
  const sketchedAt = kind.sketched;
  const rowsOfBucket = new Map<string, RollupDelta[]>();
  const rowFor = (log: RollupSource, grain: number, dims: (string | number)[], dimsKey: string) => {
    const key = `${grain}:${bucketOf(log.timestamp, grain)}:${dimsKey}`;
    let row = rows.get(key);
    if (!row) rows.set(key, (row = newDelta(kind, log, grain, dims)));
    return row;
  };
  const bins: string[] = new Array(sketchedAt.length);
  const count = (logs: readonly RollupSource[], sign: number) => {
    for (const log of logs) {
      const org = log.organization_id;
      // Lengths keep the key unambiguous whatever characters the text dimensions hold.
      let dimsKey = `${org.length}:${org}`;
      for (const d of kind.dimensions) {
        const text = String(log[d]);
        dimsKey += `${text.length}:${text}`;
      }
      const bucketKey = `${Math.floor(log.timestamp / smallest)}:${dimsKey}`;
      let targets = rowsOfBucket.get(bucketKey);
      if (!targets) {
        const dims = kind.dimensions.map((d) => log[d]);
        targets = kind.grains.map((grain) => rowFor(log, grain, dims, dimsKey));
        rowsOfBucket.set(bucketKey, targets);
      }
      const failed = log.status_code >= 400 ? sign : 0;
      for (let k = 0; k < sketchedAt.length; k++) {
        const value = log[sketchedAt[k]];
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
}

/**
 * The changes to the rollups of `kinds` (every table by default) for adding some logs and removing
 * others, one per distinct row, in a fixed order — table by table, then by key: concurrent writers then
 * lock rows in the same order (no deadlock).
 */
export function rollupDeltas(
  added: readonly RollupSource[],
  removed: readonly RollupSource[] = [],
  kinds: readonly RollupKind[] = ROLLUP_KINDS,
): RollupDelta[] {
  return kinds.flatMap((kind) => {
    const rows = new Map<string, RollupDelta>();
    countKind(kind, rows, added, removed);
    return [...rows.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, d]) => d)
      .filter((d) => !isEmpty(d));
  });
}

/** A delta that changes nothing (a log removed and added back as it was). */
const isEmpty = (d: RollupDelta) =>
  d.log_count === 0 &&
  d.failed_count === 0 &&
  d.sums.every(([n, sum]) => n === 0 && sum === 0) &&
  d.bins.every((bins) => [...bins.values()].every((n) => n === 0));
