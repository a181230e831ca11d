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
 */
export function bucketExpr(plan: BucketPlan, start: number, end: number): Expr {
  const ts = sql.ref('logs.timestamp');
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

const PERCENTILES = { p50: 0.5, p90: 0.9, p95: 0.95, p99: 0.99 } as const;

/**
 * A metric's aggregate. Percentiles are exact, interpolated between the two nearest values
 * (percentile_cont on both databases), computed from the bucket's own rows.
 */
export function aggregateExpr(metric: Metric, dialect: DialectName): Expr {
  const { agg } = metric;
  if (agg === 'error_rate') return sql`avg(case when logs.failed = 1 then 1.0 else 0.0 end)`;
  if (metric.field === null) return sql`count(*)`;
  const x = fieldExpr(metric.field, dialect);
  switch (agg) {
    case 'count':
      return sql`count(${x})`;
    case 'sum':
      return sql`sum(${x})`;
    case 'avg':
      return sql`avg(${x})`;
    case 'min':
      return sql`min(${x})`;
    case 'max':
      return sql`max(${x})`;
    default: {
      const p = PERCENTILES[agg];
      return dialect === 'postgres'
        ? sql`percentile_cont(${sql.lit(p)}) within group (order by ${x})`
        : sql`percentile_cont(${x}, ${sql.lit(p)})`;
    }
  }
}
