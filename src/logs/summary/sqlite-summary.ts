/**
 * A summary's metrics on SQLite, from gl_summary_cells (db/sqlite-aggregates/cells-aggregate.ts): the range cut at bucket
 * edges into one time slice per reader thread, each slice read once on its own thread. A bucket lies in
 * one slice, so its cells and its own values come whole from that slice; the totals add the slices'
 * counts, and each total percentile is found among the slices' sorted values.
 */
import { type AliasedSelectQueryBuilder, type Kysely, sql } from 'kysely';
import type { Database } from '../../db/schema.js';
import { SQLITE_READERS } from '../../db/sqlite-read-dialect.js';
import type { LogScope } from '../list/scope.js';
import type { BucketPlan } from './buckets.js';
import { type CellsSpec, decodeCells, groupKey } from '../../db/sqlite-aggregates/cells-aggregate.js';
import { groupTally, parseTally } from '../../db/sqlite-aggregates/group-tally.js';
import { addPartials, type MetricValue, noPartials, partialsOf } from './partials.js';
import type { Metric } from './request.js';

export interface CellValues {
  overall: MetricValue[];
  /** Bucket number → its metrics. */
  buckets: Map<number, MetricValue[]>;
  cells: { bucket: number; series: number; values: MetricValue[] }[];
}

/** The slices of the range: contiguous runs of buckets, as many as there are reader threads. */
function slicesOf(plan: BucketPlan, scope: LogScope): LogScope[] {
  const count = Math.min(SQLITE_READERS, plan.starts.length);
  const slices: LogScope[] = [];
  for (let s = 0; s < count; s += 1) {
    const first = Math.floor((s * plan.starts.length) / count);
    const next = Math.floor(((s + 1) * plan.starts.length) / count);
    const start = s === 0 ? scope.start : Math.max(scope.start, plan.starts[first]);
    const end = s === count - 1 ? scope.end : Math.min(scope.end, plan.starts[next] - 1);
    if (start <= end) slices.push({ ...scope, start, end });
  }
  return slices;
}

/**
 * The k-th smallest (from 0) of values spread over sorted arrays: for the array holding it, a binary
 * search finds the entry with at most k values below it and more than k at or below it.
 */
function kthOfSorted(arrays: Float64Array[], k: number): number {
  const below = (v: number, orEqual: boolean) => {
    let n = 0;
    for (const a of arrays) {
      let lo = 0;
      let hi = a.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (a[mid] < v || (orEqual && a[mid] === v)) lo = mid + 1;
        else hi = mid;
      }
      n += lo;
    }
    return n;
  };
  for (const a of arrays) {
    let lo = 0;
    let hi = a.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = a[mid];
      if (k < below(v, false)) hi = mid - 1;
      else if (k >= below(v, true)) lo = mid + 1;
      else return v;
    }
  }
  throw new Error(`no value of rank ${k}`);
}

/** percentile_cont over the union of sorted arrays (cells-aggregate.ts percentileOfSorted, spread out). */
export function percentileAcross(arrays: Float64Array[], fraction: number): number | null {
  const n = arrays.reduce((sum, a) => sum + a.length, 0);
  if (n === 0) return null;
  const ix = fraction * (n - 1);
  const i1 = Math.trunc(ix);
  const i2 = ix === i1 || i1 === n - 1 ? i1 : i1 + 1;
  const v1 = kthOfSorted(arrays, i1);
  const v2 = i2 === i1 ? v1 : kthOfSorted(arrays, i2);
  return v1 + (v2 - v1) * (ix - i1);
}

export async function summarizeSlices(
  db: Kysely<Database>,
  plan: BucketPlan,
  scope: LogScope,
  metrics: readonly Metric[],
  /** The group-by fields' values of each kept series, in series order; null without group_by. */
  series: unknown[][] | null,
  /** The rows of a slice: bkt, sc, the group values as g0, g1 …, the metric fields as x0, x1 …. */
  rows: (within: LogScope) => AliasedSelectQueryBuilder<Record<string, unknown>, 't'>,
  groups: number,
): Promise<CellValues> {
  const { fields, fractions, values: valuesOf } = partialsOf(metrics);
  const spec: CellsSpec = {
    fractions,
    groups,
    series: series && series.map((values) => values.map(groupKey)),
  };
  // The totals' sorted values come per field with percentiles, in field order.
  const sortedAt = fractions.map((f, j) =>
    f.length === 0 ? -1 : fractions.slice(0, j).filter((g) => g.length > 0).length,
  );

  const specText = JSON.stringify(spec);
  const slices = await Promise.all(
    slicesOf(plan, scope).map(async (within) => {
      const args = [
        ...Array.from({ length: groups }, (_, i) => sql.ref(`t.g${i}`)),
        ...fields.map((_, j) => sql.ref(`t.x${j}`)),
      ];
      const row = (await db
        .selectFrom(rows(within))
        .select(
          sql`gl_summary_cells(gl_summary_spec(${specText}), t.bkt, t.sc${sql.join([sql``, ...args], sql`, `)})`.as(
            'cells',
          ),
        )
        .executeTakeFirstOrThrow()) as { cells: Uint8Array };
      return decodeCells(row.cells);
    }),
  );

  const out: CellValues = { overall: [], buckets: new Map(), cells: [] };
  const total = noPartials(fields.length);
  for (const { result } of slices) {
    for (const [bucket, series, stats] of result.cells) {
      out.cells.push({ bucket, series, values: valuesOf(stats, (j, q) => stats.p[j][q]) });
    }
    for (const [bucket, stats] of result.buckets)
      out.buckets.set(
        bucket,
        valuesOf(stats, (j, q) => stats.p[j][q]),
      );
    addPartials(total, result.total);
  }
  out.overall = valuesOf(total, (j, q) =>
    percentileAcross(
      slices.flatMap((s) => (s.sorted[sortedAt[j]] ? [s.sorted[sortedAt[j]]] : [])),
      spec.fractions[j][q],
    ),
  );
  return out;
}

/** Group order: values ascending, a missing value last (the order ties between top groups take). */
export const compareGroupValues = (a: unknown, b: unknown) =>
  a === b ? 0 : a === null ? 1 : b === null ? -1 : (a as string) < (b as string) ? -1 : 1;

/**
 * The `count` groups with the most logs (ties in group order, a missing value last), and their counts:
 * each slice's rows tallied by gl_group_tally on its reader thread, the tallies added here.
 */
export async function topGroupsBySlices(
  db: Kysely<Database>,
  plan: BucketPlan,
  scope: LogScope,
  /** The rows of a slice: the group values as g0, g1 …. */
  rows: (within: LogScope) => AliasedSelectQueryBuilder<Record<string, unknown>, 't'>,
  groups: number,
  count: number,
): Promise<Record<string, unknown>[]> {
  const args = Array.from({ length: groups }, (_, i) => sql.ref(`t.g${i}`));
  const tallies = await Promise.all(
    slicesOf(plan, scope).map(async (within) => {
      const row = await db.selectFrom(rows(within)).select(groupTally(args).as('tally')).executeTakeFirstOrThrow();
      return parseTally(row.tally);
    }),
  );
  const sums = new Map<string, { values: unknown[]; n: number }>();
  for (const tally of tallies) {
    for (const entry of tally) {
      const values = entry.slice(0, groups);
      const key = JSON.stringify(values);
      const sum = sums.get(key);
      if (sum) sum.n += entry[groups] as number;
      else sums.set(key, { values, n: entry[groups] as number });
    }
  }
  return [...sums.values()]
    .sort(
      (a, b) =>
        b.n - a.n || compareGroupValues(a.values[0], b.values[0]) || compareGroupValues(a.values[1], b.values[1]),
    )
    .slice(0, count)
    .map(({ values, n }) => ({ ...Object.fromEntries(values.map((v, i) => [`g${i}`, v])), n }));
}
