/**
 * Summaries of request logs over time (docs/api.md "Analytics"): the list's scope and filter, metrics
 * per time bucket, optionally per group (the top `limit` groups by log count, the rest as one "other"
 * group), and the same without groups as totals.
 */
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DialectName } from '../../db/connect.js';
import type { Database } from '../../db/schema.js';
import { filteredLogs } from '../list/list.js';
import { planFilter } from '../list/filter-plan.js';
import { planBuckets } from './buckets.js';
import type { GroupField, Metric, SummaryRequest } from './request.js';
import { aggregateExpr, bucketExpr, groupExpr, sameAs } from './sql.js';

export type MetricValue = number | null;
export type GroupValue = string | number | boolean | null;

export interface SummarySeries {
  /** Group-by field → value; empty for the "other" group and when there is no group_by. */
  group: Record<string, GroupValue>;
  /** true for the one series that sums every group past the top `limit`. */
  other: boolean;
  /** Per bucket, the value of each metric. */
  points: MetricValue[][];
}

export interface Summary {
  bucket: string;
  tz: string;
  start_time: string;
  end_time: string;
  metrics: { field: string | null; agg: string }[];
  group_by: string[];
  buckets: string[];
  series: SummarySeries[];
  totals: { values: MetricValue[]; points: MetricValue[][] };
}

type Row = Record<string, unknown>;

const metricName = (m: Metric) =>
  m.field === null ? null : m.field.kind === 'column' ? m.field.column : `scores__${m.field.evaluatorId}`;

/** What an aggregate answers over no log: counts 0, everything else null. */
const emptyValue = (m: Metric): MetricValue => (m.agg === 'count' ? 0 : null);

const toNumber = (v: unknown): MetricValue => (v === null || v === undefined ? null : Number(v));

function presentGroupValue(field: GroupField, v: unknown): GroupValue {
  if (v === null || v === undefined) return null;
  if (field.kind === 'column' && field.column === 'cache_hit') return Number(v) === 1;
  if (field.kind === 'column' && field.column === 'status_code') return Number(v);
  return String(v);
}

export async function summarizeLogs(db: Kysely<Database>, dialect: DialectName, request: SummaryRequest) {
  const { scope, metrics, groupBy, limit } = request;
  const plan = planBuckets(scope.start, scope.end, request.tz, request.size);
  const filter = request.filter && (await planFilter(db, dialect, scope, request.filter));
  const logs = () => filteredLogs(db, dialect, scope, filter);
  const bucket = bucketExpr(plan, scope.start, scope.end);
  const aggregates = (row: Row) => metrics.map((m, i) => toNumber(row[`m${i}`]));
  const selectMetrics = metrics.map((m, i) => aggregateExpr(m, dialect).as(`m${i}`));

  const emptyPoints = () => plan.starts.map(() => metrics.map(emptyValue));
  const pointsOf = (rows: Row[], into: MetricValue[][][], seriesOf: (row: Row) => number) => {
    for (const row of rows) {
      const at = plan.indexOf.get(Number(row.bkt));
      const s = seriesOf(row);
      if (at !== undefined && s >= 0 && s < into.length) into[s][at] = aggregates(row);
    }
  };

  // The totals and the groups are independent: their queries run side by side on the read connections.
  const [[overall], totalsByBucket, series] = await Promise.all([
    logs().select(selectMetrics).execute() as Promise<Row[]>,
    logs()
      .select([bucket.as('bkt'), ...selectMetrics])
      .groupBy(sql`bkt`)
      .execute() as Promise<Row[]>,
    groupBy.length === 0 ? null : groupedSeries(),
  ]);
  const totalPoints = [emptyPoints()];
  pointsOf(totalsByBucket, totalPoints, () => 0);
  const totals = {
    values: overall ? aggregates(overall).map((v, i) => v ?? emptyValue(metrics[i])) : metrics.map(emptyValue),
    points: totalPoints[0],
  };

  async function groupedSeries(): Promise<SummarySeries[]> {
    const groups = groupBy.map(groupExpr);
    const names = groups.map((_, i) => `g${i}`);
    // The top groups by number of logs; ties in group order, so both databases answer the same.
    const topQuery = logs()
      .select([...groups.map((g, i) => g.as(names[i])), sql<number>`count(*)`.as('n')])
      .groupBy(names.map((n) => sql.ref(n)))
      .orderBy(sql`n desc`);
    const top = (await names
      .reduce((q, n) => q.orderBy(sql`${sql.ref(n)} asc nulls last`), topQuery)
      .limit(limit + 1)
      .execute()) as Row[];
    const kept = top.slice(0, limit);
    const hasOther = top.length > limit;
    // Each log's series: the index of its top group, or −1 (other).
    const whens: RawBuilder<unknown>[] = kept.map(
      (row, k) =>
        sql`when ${sql.join(
          groups.map((g, i) => sameAs(dialect, g, row[names[i]])),
          sql` and `,
        )} then ${sql.lit(k)}`,
    );
    const seriesIndex = whens.length > 0 ? sql`(case ${sql.join(whens, sql` `)} else -1 end)` : sql`-1`;
    const rows = (await logs()
      .select([bucket.as('bkt'), seriesIndex.as('grp'), ...selectMetrics])
      .groupBy([sql`bkt`, sql`grp`])
      .execute()) as Row[];
    const points = [...kept, ...(hasOther ? [null] : [])].map(emptyPoints);
    pointsOf(rows, points, (row) => (Number(row.grp) === -1 ? kept.length : Number(row.grp)));
    const named = kept.map((row, k) => ({
      group: Object.fromEntries(groupBy.map((f, i) => [f.name, presentGroupValue(f, row[names[i]])])),
      other: false,
      points: points[k],
    }));
    return hasOther ? [...named, { group: {}, other: true, points: points[kept.length] }] : named;
  }

  const summary: Summary = {
    bucket: plan.size.name,
    tz: request.tz,
    start_time: new Date(scope.start).toISOString(),
    end_time: new Date(scope.end).toISOString(),
    metrics: metrics.map((m) => ({ field: metricName(m), agg: m.agg })),
    group_by: groupBy.map((g) => g.name),
    buckets: plan.starts.map((t) => new Date(t).toISOString()),
    series: series ?? [{ group: {}, other: false, points: totals.points }],
    totals,
  };
  return summary;
}
