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

const newDelta = (
  kind: RollupKind,
  organizationId: string,
  grain: number,
  bucketStart: number,
  dims: (string | number)[],
): RollupDelta => ({
  kind,
  organization_id: organizationId,
  grain_ms: grain,
  bucket_start: bucketStart,
  dims,
  log_count: 0,
  failed_count: 0,
  sums: SUMMED_FIELDS.map(() => [0, 0]),
  bins: kind.sketched.map(() => new Map()),
});

/** Adds `from`'s counts, sums and sketches to `into`'s. */
function addDelta(into: RollupDelta, from: RollupDelta): void {
  into.log_count += from.log_count;
  into.failed_count += from.failed_count;
  for (let i = 0; i < into.sums.length; i++) {
    into.sums[i][0] += from.sums[i][0];
    into.sums[i][1] += from.sums[i][1];
  }
  for (let k = 0; k < into.bins.length; k++) {
    const map = into.bins[k];
    for (const [bin, n] of from.bins[k]) map.set(bin, (map.get(bin) ?? 0) + n);
  }
}

/** The text dimensions' values of a log as one key; lengths keep it unambiguous whatever they hold. */
function dimensionsKey(kind: RollupKind, log: RollupSource): string {
  const org = log.organization_id;
  let key = `${org.length}:${org}`;
  for (const d of kind.dimensions) {
    const text = String(log[d]);
    key += `${text.length}:${text}`;
  }
  return key;
}

/** Whether two logs share a kind's organization and dimensions (a batch's logs mostly do, in runs). */
function sameDimensions(kind: RollupKind, a: RollupSource, b: RollupSource): boolean {
  // From the last: the one most likely to differ (a customer) is last in its kind's list.
  const dims = kind.dimensions;
  for (let i = dims.length - 1; i >= 0; i--) if (a[dims[i]] !== b[dims[i]]) return false;
  return a.organization_id === b.organization_id;
}

/**
 * One kind's deltas, keyed by `${grain}:${bucket}:${dimensions}`, added to `rows`.
 *
 * This runs for every log written, on the log-writing thread, so each log is counted once, into its row
 * of the smallest grain (found by comparing its dimensions with the previous log's, else by one key),
 * in plain loops; the larger grains' rows are then sums of those rows, far fewer than the logs.
 */
function countKind(
  kind: RollupKind,
  rows: Map<string, RollupDelta>,
  added: readonly RollupSource[],
  removed: readonly RollupSource[],
): void {
  const [smallest, ...larger] = kind.grains;
  const sketchedAt = kind.sketched;
  const smallestRows = new Map<string, { row: RollupDelta; dimsKey: string }>();
  let previous: RollupSource | null = null;
  let previousRow: RollupDelta | null = null;
  const count = (logs: readonly RollupSource[], sign: number) => {
    for (const log of logs) {
      const bucket = bucketOf(log.timestamp, smallest);
      let row: RollupDelta;
      if (
        previous !== null &&
        previousRow !== null &&
        previousRow.bucket_start === bucket &&
        sameDimensions(kind, previous, log)
      ) {
        row = previousRow;
      } else {
        const dimsKey = dimensionsKey(kind, log);
        const key = `${smallest}:${bucket}:${dimsKey}`;
        const found = smallestRows.get(key);
        if (found) row = found.row;
        else {
          row = newDelta(
            kind,
            log.organization_id,
            smallest,
            bucket,
            kind.dimensions.map((d) => log[d]),
          );
          smallestRows.set(key, { row, dimsKey });
        }
      }
      previous = log;
      previousRow = row;
      row.log_count += sign;
      if (log.status_code >= 400) row.failed_count += sign;
      for (let i = 0; i < SUMMED_FIELDS.length; i++) {
        const value = log[SUMMED_FIELDS[i]];
        if (value === null || value === undefined) continue;
        row.sums[i][0] += sign;
        row.sums[i][1] += sign * Number(value);
      }
      for (let k = 0; k < sketchedAt.length; k++) {
        const value = log[sketchedAt[k]];
        if (value === null || value === undefined) continue;
        const bin = binOf(Number(value));
        const map = row.bins[k];
        map.set(bin, (map.get(bin) ?? 0) + sign);
      }
    }
  };
  count(added, 1);
  count(removed, -1);
  for (const [key, { row, dimsKey }] of smallestRows) {
    rows.set(key, row);
    for (const grain of larger) {
      const bucket = bucketOf(row.bucket_start, grain);
      const largerKey = `${grain}:${bucket}:${dimsKey}`;
      let sum = rows.get(largerKey);
      if (!sum) {
        sum = newDelta(kind, row.organization_id, grain, bucket, row.dims);
        rows.set(largerKey, sum);
      }
      addDelta(sum, row);
    }
  }
}

/**
 * The changes to the rollups of `kinds` (every table by default) for adding some logs and removing
 * others, one per distinct row, table by table. `locking` (the default) puts each table's rows in a fixed
 * order, by key: concurrent writers on PostgreSQL then lock rows in the same order (no deadlock). The
 * SQLite writer, alone on its database, asks for `any` and skips the sort.
 */
export function rollupDeltas(
  added: readonly RollupSource[],
  removed: readonly RollupSource[] = [],
  kinds: readonly RollupKind[] = ROLLUP_KINDS,
  order: 'locking' | 'any' = 'locking',
): RollupDelta[] {
  return kinds.flatMap((kind) => {
    const rows = new Map<string, RollupDelta>();
    countKind(kind, rows, added, removed);
    const entries = [...rows.entries()];
    if (order === 'locking') entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return entries.map(([, d]) => d).filter((d) => !isEmpty(d));
  });
}

/** A delta that changes nothing (a log removed and added back as it was). */
const isEmpty = (d: RollupDelta) =>
  d.log_count === 0 &&
  d.failed_count === 0 &&
  d.sums.every(([n, sum]) => n === 0 && sum === 0) &&
  d.bins.every((bins) => [...bins.values()].every((n) => n === 0));
