/**
 * A summary read from the rollups (rollup-plan.ts says when): the rows of the spans covering the range
 * added up per bucket and group by the database (one row each: counts and sums summed, sketches merged),
 * and the logs of its ends, then put together per bucket and series in JavaScript — counts and sums
 * exactly, the sketches bin by bin — and each metric's value read from the sums (exact) or from the
 * merged sketch (within RELATIVE_ERROR).
 */
import type { Kysely } from 'kysely';
import type { DialectName } from '../../db/connect.js';
import type { Database } from '../../db/schema.js';
import type { FilterNode } from '../../filters/types.js';
import type { BucketPlan } from '../summary/buckets.js';
import type { Metric, SummaryRequest } from '../summary/request.js';
import { PERCENTILES } from '../summary/sql.js';
import { compareGroupValues } from '../summary/sqlite-summary.js';
import { SKETCHED_FIELDS, SUMMED_FIELDS } from './rollup-deltas.js';
import { fromSketch, type RollupRead } from './rollup-plan.js';
import { DenseSketch } from './dense-sketch.js';
import { logParts, type Part, rollupParts } from './rollup-parts.js';

type MetricValue = number | null;
type Row = Record<string, unknown>;

/** What some logs add up to: counts, per SUMMED_FIELDS [values, sum], per SKETCHED_FIELDS its bins. */
interface Cell {
  n: number;
  e: number;
  sums: [number, number][];
  /** Per SKETCHED_FIELDS entry; null until something is added (a summary of sums needs none). */
  bins: (DenseSketch | null)[];
}

const emptyCell = (): Cell => ({
  n: 0,
  e: 0,
  sums: SUMMED_FIELDS.map(() => [0, 0]),
  bins: SKETCHED_FIELDS.map(() => null),
});

/** `sketched`: per SKETCHED_FIELDS entry, whether a metric reads its sketch (the others are not added). */
function addCell(into: Cell, part: Cell | Part, sketched: readonly boolean[]): void {
  into.n += part.n;
  into.e += part.e;
  for (let i = 0; i < into.sums.length; i++) {
    into.sums[i][0] += part.sums[i][0];
    into.sums[i][1] += part.sums[i][1];
  }
  for (let i = 0; i < into.bins.length; i++) {
    const bins = part.bins[i];
    if (!sketched[i] || bins === null) continue;
    const sketch = (into.bins[i] ??= new DenseSketch());
    if (bins instanceof DenseSketch) sketch.addSketch(bins);
    else if (bins instanceof Map) sketch.addBins(bins);
    else sketch.addStored(bins);
  }
}

/** Each metric's value over a cell; null where it has no value (as the exact path answers). */
function valuesOf(cell: Cell, metrics: readonly Metric[]): MetricValue[] {
  return metrics.map((m) => {
    if (m.agg === 'error_rate') return cell.n > 0 ? cell.e / cell.n : null;
    if (m.field === null) return cell.n;
    const column = m.field.kind === 'column' ? m.field.column : '';
    if (!fromSketch(m)) {
      const [n, sum] = cell.sums[SUMMED_FIELDS.indexOf(column as (typeof SUMMED_FIELDS)[number])];
      if (m.agg === 'count') return n;
      if (n === 0) return null;
      return m.agg === 'sum' ? sum : sum / n;
    }
    const k = SKETCHED_FIELDS.indexOf(column as (typeof SKETCHED_FIELDS)[number]);
    const sketch = cell.bins[k];
    const fraction = m.agg === 'min' ? 0 : m.agg === 'max' ? 1 : PERCENTILES[m.agg as keyof typeof PERCENTILES];
    return sketch === null ? null : sketch.quantile(fraction);
  });
}

/** A bucket's (and a series') metrics, as summary.ts assembles them: `bkt` the bucket's number. */
export interface RolledPoint {
  bkt: number;
  grp: number;
  values: MetricValue[];
}

export interface RolledSummary {
  overall: MetricValue[];
  byBucket: RolledPoint[];
  byGroup: RolledPoint[];
  /** The top groups (values as g0, g1 …) and whether there are more; null without group_by. */
  top: { kept: Row[]; hasOther: boolean } | null;
  /** Some value came from a sketch. */
  approximate: boolean;
}

/**
 * The summary of `request` from the rows of `read` (rollupRead), its ends read from the logs. Grouped by
 * a table of many-valued groups (customers: thousands), the groups are ranked first from one row each,
 * then only the top ones read per bucket (the others as one series), as the logs' path does: per bucket
 * and group the rows would be as many as the groups times the buckets.
 */
export async function summarizeFromRollups(
  db: Kysely<Database>,
  dialect: DialectName,
  request: SummaryRequest,
  plannedFilter: FilterNode | null,
  plan: BucketPlan,
  read: RollupRead,
): Promise<RolledSummary> {
  const { kind, spans } = read;
  const { metrics, groupBy, limit } = request;
  const sketched = SKETCHED_FIELDS.map((f) =>
    metrics.some((m) => fromSketch(m) && m.field?.kind === 'column' && m.field.column === f),
  );
  const withBins = sketched.some(Boolean);
  // A minute's bucket: the last that starts at or before it (no part straddles two: rollup-plan.ts).
  const numberOf = new Map([...plan.indexOf].map(([number, index]) => [index, number]));
  const bucketOf = (start: number) => {
    let lo = 0;
    let hi = plan.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (plan.starts[mid] <= start) lo = mid;
      else hi = mid - 1;
    }
    return numberOf.get(lo)!;
  };
  const rows = spans.filter((s) => s.grain > 0);
  const rankFirst = groupBy.length > 0 && kind.rankFirst;
  const [rolled, ends] = await Promise.all([
    rollupParts(db, dialect, request, plan, kind, rows, sketched, rankFirst ? { by: 'group' } : { by: 'bucket' }),
    logParts(
      db,
      dialect,
      request,
      plannedFilter,
      kind,
      spans.filter((s) => s.grain === 0),
      bucketOf,
    ),
  ]);
  // Ranked first: these parts are whole groups, only counted; the cells come from a read by series below.
  let parts = [...rolled, ...ends];

  // The top groups by number of logs, ties in group order (as the logs' path orders them).
  const columns = groupBy.map((g) => (g.kind === 'column' ? g.column : ''));
  const keyOf = (part: Part) => JSON.stringify(columns.map((c) => part.dims[c]));
  let top: RolledSummary['top'] = null;
  const seriesOf = new Map<string, number>();
  if (groupBy.length > 0) {
    const counts = new Map<string, { values: unknown[]; n: number }>();
    for (const part of parts) {
      const key = keyOf(part);
      const entry = counts.get(key) ?? { values: columns.map((c) => part.dims[c]), n: 0 };
      entry.n += part.n;
      counts.set(key, entry);
    }
    const ranked = [...counts.entries()]
      .filter(([, g]) => g.n > 0)
      .sort(([, a], [, b]) => {
        if (a.n !== b.n) return b.n - a.n;
        for (let i = 0; i < columns.length; i++) {
          const c = compareGroupValues(a.values[i], b.values[i]);
          if (c !== 0) return c;
        }
        return 0;
      });
    const kept = ranked.slice(0, limit);
    kept.forEach(([key], k) => seriesOf.set(key, k));
    top = {
      kept: kept.map(([, g]) => Object.fromEntries(g.values.map((v, i) => [`g${i}`, v]))),
      hasOther: ranked.length > limit,
    };
    if (rankFirst) {
      const series = kept.map(([, g]) => g.values);
      parts = [
        ...(await rollupParts(db, dialect, request, plan, kind, rows, sketched, { by: 'series', kept: series })),
        ...ends,
      ];
    }
  }

  // Each part is added once, to its bucket's cell of its series; the buckets and the whole range are then
  // summed from the cells.
  const cells = new Map<string, { bkt: number; grp: number; cell: Cell }>();
  for (const part of parts) {
    const { bkt } = part;
    const grp = top === null ? 0 : (part.grp ?? seriesOf.get(keyOf(part)) ?? -1);
    const key = `${bkt}:${grp}`;
    let cell = cells.get(key);
    if (!cell) cells.set(key, (cell = { bkt, grp, cell: emptyCell() }));
    addCell(cell.cell, part, sketched);
  }
  const overall = emptyCell();
  const buckets = new Map<number, Cell>();
  for (const { bkt, cell } of cells.values()) {
    addCell(overall, cell, sketched);
    let bucket = buckets.get(bkt);
    if (!bucket) buckets.set(bkt, (bucket = emptyCell()));
    addCell(bucket, cell, sketched);
  }
  if (top === null) cells.clear();
  return {
    overall: valuesOf(overall, metrics),
    byBucket: [...buckets]
      .filter(([, c]) => c.n > 0)
      .map(([bkt, c]) => ({ bkt, grp: 0, values: valuesOf(c, metrics) })),
    byGroup: [...cells.values()]
      .filter(({ cell }) => cell.n > 0)
      .map(({ bkt, grp, cell }) => ({ bkt, grp, values: valuesOf(cell, metrics) })),
    top,
    approximate: withBins,
  };
}
