/**
 * The SQL pieces of a summary: a log's bucket number, its group, and each metric's aggregate, for
 * SQLite and PostgreSQL. Every value is a bound parameter.
 */
import { type RawBuilder, sql } from 'kysely';
import type { DialectName } from '../../db/connect.js';
import type { BucketPlan } from './buckets.js';
import type { GroupField, Metric, MetricField } from './request.js';

type Expr = RawBuilder<unknown>;

const int = (n: number) => sql`cast(${n} as bigint)`;

/**
 * floor((local time − first bucket's local start) / size), local time being the log's timestamp plus
 * the zone's offset at that instant: one offset per segment of the range (two a year at most under DST).
 * `at` is the instant's column: the log's timestamp, or a rollup row's bucket start (a row lies inside
 * one bucket, so its start's bucket is its logs').
 */
export function bucketExpr(plan: BucketPlan, start: number, end: number, at = 'logs.timestamp'): Expr {
  const ts = sql.ref(at);
  if (plan.firstInstant !== null) return sql`((${ts} - ${int(plan.firstInstant)}) / ${int(plan.size.ms)})`;
  const segments = plan.segments.filter((s) => s.end > start && s.start <= end);
  let offset: Expr = int(segments[segments.length - 1].offset);
  if (segments.length > 1) {
    const whens = segments.slice(0, -1).map((s) => sql`when ${ts} < ${int(s.end)} then ${int(s.offset)}`);
    offset = sql`(case ${sql.join(whens, sql` `)} else ${offset} end)`;
  }
  return sql`((${ts} + ${offset} - ${int(plan.firstLocal)}) / ${int(plan.size.ms)})`;
}

/** A group-by field's value per log; an absent metadata key is null. */
export function groupExpr(field: GroupField): Expr {
  if (field.kind === 'column') return sql.ref(`logs.${field.column}`);
  return sql`(select m.value_text from log_metadata m where m.log_id = logs.id and m.key = ${field.key})`;
}

/** Null-safe equality (a group of logs without the metadata key is a group of its own). */
export const sameAs = (dialect: DialectName, expr: Expr, value: unknown) =>
  dialect === 'postgres' ? sql`${expr} is not distinct from ${value}` : sql`${expr} is ${value}`;

function fieldExpr(field: MetricField, dialect: DialectName): Expr {
  const raw =
    field.kind === 'column'
      ? sql.ref(`logs.${field.column}`)
      : sql`(select s.score_value from scores s where s.log_id = logs.id and s.evaluator_id = ${field.evaluatorId})`;
  return dialect === 'postgres' ? sql`cast(${raw} as double precision)` : sql`cast(${raw} as real)`;
}

export const PERCENTILES = { p50: 0.5, p90: 0.9, p95: 0.95, p99: 0.99 } as const;
type Percentile = keyof typeof PERCENTILES;
export const isPercentile = (agg: string): agg is Percentile => Object.hasOwn(PERCENTILES, agg);

const fieldKey = (field: MetricField) => (field.kind === 'column' ? field.column : `scores__${field.evaluatorId}`);

const toNumber = (v: unknown) => (v === null || v === undefined ? null : Number(v));

/** Whether a metric reads a field's values (count of logs and error_rate read none). */
export const readsField = (m: Metric): m is Metric & { field: MetricField } =>
  m.field !== null && m.agg !== 'error_rate';

/**
 * The fields a summary's metrics read, each once, in the order of the metrics naming them: a pass
 * selects them as x0, x1 … (`fieldOf[i]` is metric i's, or −1).
 */
export function metricFields(metrics: readonly Metric[]) {
  const keys: string[] = [];
  const fields: MetricField[] = [];
  const fieldOf = metrics.map((m) => {
    if (!readsField(m)) return -1;
    const key = fieldKey(m.field);
    let j = keys.indexOf(key);
    if (j < 0) {
      j = keys.push(key) - 1;
      fields.push(m.field);
    }
    return j;
  });
  return { keys, fields, fieldOf, exprs: (dialect: DialectName) => fields.map((f) => fieldExpr(f, dialect)) };
}

/**
 * The metrics of a summary as one pass reads them: `fields`, each metric field's value per log (each
 * field once), selected by the pass's rows as x0, x1 …, with the log's status code as `sc`; and
 * `aggregates` over those rows (table `t`), read back per row by `read`.
 *
 * Percentiles are exact, interpolated between the two nearest values (percentile_cont on both
 * databases), computed from the bucket's own rows. On PostgreSQL every percentile of one field comes
 * from one aggregate (percentile_cont of an array of fractions: one sort of the values, not one per
 * percentile). error_rate counts status codes of 400 or more: a log is failed exactly then (docs/api.md
 * "The log record"), and the status code is in the covering index where `failed` is not.
 */
export function metricShape(metrics: readonly Metric[], dialect: DialectName) {
  const { keys, exprs } = metricFields(metrics);
  const fields = exprs(dialect);
  const columnOf = (field: MetricField) => sql.ref(`t.x${keys.indexOf(fieldKey(field))}`);
  const aggregates: Expr[] = [];
  const add = (expr: Expr) => aggregates.push(expr) - 1;
  // PostgreSQL: field key → [aggregate index, fractions].
  const percentileArrays = new Map<string, { at: number; fractions: number[] }>();
  const readers: ((row: Record<string, unknown>) => number | null)[] = [];
  for (const metric of metrics) {
    const { agg, field } = metric;
    if (agg === 'error_rate') {
      const at = add(sql`avg(case when t.sc >= 400 then 1.0 else 0.0 end)`);
      readers.push((row) => toNumber(row[`a${at}`]));
      continue;
    }
    if (field === null) {
      const at = add(sql`count(*)`);
      readers.push((row) => toNumber(row[`a${at}`]));
      continue;
    }
    const x = columnOf(field);
    if (isPercentile(agg) && dialect === 'postgres') {
      const key = fieldKey(field);
      let entry = percentileArrays.get(key);
      if (!entry) {
        entry = { at: add(sql``), fractions: [] };
        percentileArrays.set(key, entry);
      }
      let k = entry.fractions.indexOf(PERCENTILES[agg]);
      if (k < 0) k = entry.fractions.push(PERCENTILES[agg]) - 1;
      const at = entry.at;
      readers.push((row) => {
        const values = row[`a${at}`] as unknown[] | null | undefined;
        return values ? toNumber(values[k]) : null;
      });
      continue;
    }
    const at = add(
      isPercentile(agg)
        ? sql`percentile_cont(${x}, ${sql.lit(PERCENTILES[agg])})`
        : {
            count: sql`count(${x})`,
            sum: sql`sum(${x})`,
            avg: sql`avg(${x})`,
            min: sql`min(${x})`,
            max: sql`max(${x})`,
          }[agg],
    );
    readers.push((row) => toNumber(row[`a${at}`]));
  }
  for (const [key, { at, fractions }] of percentileArrays) {
    const x = sql.ref(`t.x${keys.indexOf(key)}`);
    const list = sql.join(fractions.map((f) => sql.lit(f)));
    aggregates[at] = sql`percentile_cont(array[${list}]::double precision[]) within group (order by ${x})`;
  }
  return {
    fields,
    aggregates: aggregates.map((a, i) => a.as(`a${i}`)),
    read: (row: Record<string, unknown>) => readers.map((r) => r(row)),
  };
}
