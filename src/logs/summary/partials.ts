/**
 * A summary's metrics from partial aggregates that add up: per bucket (or cell) the logs, the failed
 * logs, and per metric field its count, sum, min and max. Every metric but a percentile is one of these
 * or a ratio of two, so a coarser level (the totals) is the sum of finer ones, with no pass of its own.
 */
import type { FieldStats } from '../../db/sqlite-aggregates/cells-aggregate.js';
import type { Metric } from './request.js';
import { isPercentile, metricFields, PERCENTILES } from './sql.js';

export type MetricValue = number | null;

export interface Partials {
  /** Logs. */
  n: number;
  /** Logs with a status code of 400 or more. */
  e: number;
  /** Per metric field (metricFields order). */
  f: FieldStats[];
}

const NO_VALUES: FieldStats = [0, null, null, null];

/**
 * The metrics' fields (x0, x1 …), the fractions of each field's percentiles, and `values`, which turns
 * partials (with a way to find a percentile of field j, fraction q) into the metrics' values.
 */
export function partialsOf(metrics: readonly Metric[]) {
  const { fields, fieldOf } = metricFields(metrics);
  const fractions: number[][] = fields.map(() => []);
  const fractionOf = metrics.map((m, i) => {
    if (!isPercentile(m.agg)) return -1;
    const list = fractions[fieldOf[i]];
    const f = PERCENTILES[m.agg];
    return list.includes(f) ? list.indexOf(f) : list.push(f) - 1;
  });
  const values = (st: Partials, percentile: (j: number, q: number) => number | null = () => null) =>
    metrics.map((m, i): MetricValue => {
      if (m.agg === 'error_rate') return st.n > 0 ? st.e / st.n : null;
      const j = fieldOf[i];
      if (j < 0) return st.n;
      const [count, sum, min, max] = st.f[j] ?? NO_VALUES;
      switch (m.agg) {
        case 'count':
          return count;
        case 'sum':
          return sum;
        case 'avg':
          return count > 0 ? sum! / count : null;
        case 'min':
          return min;
        case 'max':
          return max;
        default:
          return percentile(j, fractionOf[i]);
      }
    });
  return { fields, fractions, values, hasPercentiles: fractionOf.some((q) => q >= 0) };
}

/** Partials of nothing, for `fields` metric fields. */
export const noPartials = (fields: number): Partials => ({
  n: 0,
  e: 0,
  f: Array.from({ length: fields }, () => [0, null, null, null]),
});

/** Adds `from` into `into`. */
export function addPartials(into: Partials, from: Partials): void {
  into.n += from.n;
  into.e += from.e;
  from.f.forEach(([count, sum, min, max], j) => {
    const to = into.f[j];
    if (count === 0) return;
    to[0] += count;
    to[1] = (to[1] ?? 0) + sum!;
    to[2] = to[2] === null || min! < to[2] ? min : to[2];
    to[3] = to[3] === null || max! > to[3] ? max : to[3];
  });
}
