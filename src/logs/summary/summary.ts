/**
 * Summaries of request logs over time (docs/api.md "Analytics"): the list's scope and filter, metrics
 * per time bucket, optionally per group (the top `limit` groups by log count, the rest as one "other"
 * group), and the same without groups as totals.
 */
import { type AliasedRawBuilder, type Kysely, type RawBuilder, sql } from 'kysely';
import type { DialectName } from '../../db/connect.js';
import type { Database } from '../../db/schema.js';
import { filteredLogs } from '../list/list.js';
import type { LogScope } from '../list/scope.js';
import { planFilter } from '../list/filter-plan.js';
import { withoutHeldConditions } from './held-conditions.js';
import { planBuckets } from './buckets.js';
import { type GroupField, MAX_ANSWER_VALUES, type Metric, type SummaryRequest } from './request.js';
import { AppError } from '../../errors.js';
import { FACET_FIELDS } from '../facets.js';
import { columnTally } from '../list/filter-options.js';
import { bucketExpr, groupExpr, metricShape, sameAs } from './sql.js';
import { compareGroupValues, summarizeSlices, topGroupsBySlices } from './sqlite-summary.js';
import { addPartials, noPartials, type Partials, partialsOf } from './partials.js';
import { rollupRead, rollupsFaster } from '../rollups/rollup-plan.js';
import { rollupsComplete } from '../rollups/rollup-backfill.js';
import { summarizeFromRollups } from '../rollups/rollup-summary.js';
import { RELATIVE_ERROR } from '../rollups/sketch.js';

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
  /** Where the numbers were read: the logs, or the rollups (src/logs/rollups/). */
  source: 'logs' | 'rollups';
  /** true: some value came from a sketch, within `relative_error`. */
  approximate: boolean;
  relative_error: number | null;
}

type Row = Record<string, unknown>;

const metricName = (m: Metric) =>
  m.field === null ? null : m.field.kind === 'column' ? m.field.column : `scores__${m.field.evaluatorId}`;

/** What an aggregate answers over no log: counts 0, everything else null. */
const emptyValue = (m: Metric): MetricValue => (m.agg === 'count' ? 0 : null);

function presentGroupValue(field: GroupField, v: unknown): GroupValue {
  if (v === null || v === undefined) return null;
  if (field.kind === 'column' && field.column === 'cache_hit') return Number(v) === 1;
  if (field.kind === 'column' && field.column === 'status_code') return Number(v);
  return String(v);
}

/** A column group-by field whose values the facet counts keep (facets.ts): its top groups come from them. */
const facetColumn = (field: GroupField) =>
  field.kind === 'column' ? FACET_FIELDS.find((f) => f.column === field.column) : undefined;

export async function summarizeLogs(db: Kysely<Database>, dialect: DialectName, request: SummaryRequest) {
  const { scope, metrics, groupBy, limit } = request;
  const plan = planBuckets(scope.start, scope.end, request.tz, request.size);
  // Every series (the top groups and "other") and the totals, each a point of every metric per bucket.
  const seriesCount = groupBy.length > 0 ? limit + 1 : 1;
  const values = plan.starts.length * (seriesCount + 1) * metrics.length;
  if (values > MAX_ANSWER_VALUES) {
    throw new AppError(
      400,
      'invalid_value',
      `bucket: '${plan.size.name}' makes ${plan.starts.length} buckets, and with ${metrics.length} metrics and up to ${seriesCount} series the answer would hold ${values} values, more than ${MAX_ANSWER_VALUES}; choose a larger bucket or "auto", fewer metrics or a smaller limit.`,
      'bucket',
    );
  }
  const remaining = request.filter && (await withoutHeldConditions(db, scope, request.filter));
  const filter = remaining && (await planFilter(db, dialect, scope, remaining));
  const groups = groupBy.map(groupExpr);
  const names = groups.map((_, i) => `g${i}`);
  const grouped = groupBy.length > 0;

  const emptyPoints = () => plan.starts.map(() => metrics.map(emptyValue));
  /** A bucket's (and a series') metrics, as each database's passes give them. */
  type Point = { bkt: number; grp: number; values: MetricValue[] };
  const points = (rows: Point[], into: MetricValue[][][], seriesOf: (row: Point) => number) => {
    for (const row of rows) {
      const at = plan.indexOf.get(row.bkt);
      const s = seriesOf(row);
      if (at !== undefined && s >= 0 && s < into.length) into[s][at] = row.values;
    }
  };
  const shape = metricShape(metrics, dialect);
  const pointOf = (row: Row): Point => ({ bkt: Number(row.bkt), grp: Number(row.grp ?? 0), values: shape.read(row) });

  /**
   * The top `limit` groups by number of logs (ties in group order, so both databases answer the same),
   * and whether there are more. One group-by field the facet counts keep, with no filter: summed from
   * them, no pass over the logs.
   */
  async function topGroups(): Promise<{ kept: Row[]; hasOther: boolean }> {
    const facet = groupBy.length === 1 && !filter ? facetColumn(groupBy[0]) : undefined;
    let top: Row[];
    if (facet) {
      const tally = await columnTally(db, scope, facet.name, facet.column);
      const parse = facet.column === 'status_code' ? Number : String;
      top = [...tally]
        .filter(([, n]) => n > 0)
        .map(([text, n]) => ({ g0: parse(text), n }))
        .sort((a, b) => b.n - a.n || compareGroupValues(a.g0, b.g0))
        .slice(0, limit + 1);
    } else if (dialect === 'sqlite') {
      top = await topGroupsBySlices(
        db,
        plan,
        scope,
        (within) =>
          filteredLogs(db, dialect, within, filter)
            .select(groups.map((g, i) => g.as(names[i])))
            .as('t'),
        groups.length,
        limit + 1,
      );
    } else {
      const topQuery = filteredLogs(db, dialect, scope, filter)
        .select([...groups.map((g, i) => g.as(names[i])), sql<number>`count(*)`.as('n')])
        .groupBy(names.map((n) => sql.ref(n)))
        .orderBy(sql`n desc`);
      top = (await names
        .reduce((q, n) => q.orderBy(sql`${sql.ref(n)} asc nulls last`), topQuery)
        .limit(limit + 1)
        .execute()) as Row[];
    }
    return { kept: top.slice(0, limit), hasOther: top.length > limit };
  }

  /** Each log's series: the index of its top group, or −1 (other). */
  const seriesIndexOf = (kept: Row[]) => {
    const whens: RawBuilder<unknown>[] = kept.map(
      (row, k) =>
        sql`when ${sql.join(
          groups.map((g, i) => sameAs(dialect, g, row[names[i]])),
          sql` and `,
        )} then ${sql.lit(k)}`,
    );
    return whens.length > 0 ? sql`(case ${sql.join(whens, sql` `)} else -1 end)` : sql`-1`;
  };

  /**
   * One pass's rows: per log its bucket, its series and the values the metrics read — narrow, so that
   * with the usual metrics (count, error_rate, cost, latency) and group-by fields SQLite reads them
   * from the covering index logs_scope_idx instead of the wide log rows.
   */
  const passRows = (series: AliasedRawBuilder<unknown, string>[], within: LogScope = scope) =>
    filteredLogs(db, dialect, within, filter)
      .select([
        bucketExpr(plan, scope.start, scope.end).as('bkt'),
        ...series,
        sql.ref('logs.status_code').as('sc'),
        ...shape.fields.map((f, j) => f.as(`x${j}`)),
      ])
      .as('t');

  let overall: MetricValue[] | undefined;
  let byBucket: Point[];
  let byGroup: Point[] = [];
  let top = null as { kept: Row[]; hasOther: boolean } | null;
  const partials = partialsOf(metrics);
  // A long range whose groups, filters and metrics the rollups hold is read from them (rollup-plan.ts).
  const narrowed = { ...request, filter: remaining || null };
  const read = rollupRead(narrowed, plan);
  const rolled =
    read &&
    (await rollupsComplete(db, read.kind)) &&
    (request.exact === false || (await rollupsFaster(db, read, request.scope)))
      ? await summarizeFromRollups(db, dialect, narrowed, filter || null, plan, read)
      : null;
  /**
   * A PostgreSQL pass, planned with random_page_cost 1.1 (the value for SSDs; the default of 4 is for
   * spinning disks): it then reads the covering index logs_scope_idx, which holds every column the usual
   * summary reads, rather than every wide log row (a week of a million logs: 330 → 225 ms a pass).
   */
  const onIndex = <T>(pass: (trx: Kysely<Database>) => Promise<T>) =>
    db.transaction().execute(async (trx) => {
      await sql`set local random_page_cost = 1.1`.execute(trx);
      return pass(trx);
    });
  if (rolled) {
    ({ overall, byBucket, byGroup, top } = rolled);
  } else if (dialect === 'postgres' && !partials.hasPercentiles) {
    // Without percentiles every metric adds up: one pass per bucket, and one per bucket and group, each
    // a hash aggregate, the totals summed from the buckets. (Grouping sets with the overall row made
    // PostgreSQL sort every row by bucket: 740 against 430 ms at a million logs.)
    const partialColumns = [
      sql`count(*)`.as('n'),
      sql`sum(case when t.sc >= 400 then 1 else 0 end)`.as('e'),
      ...partials.fields.flatMap((_, j) => {
        const x = sql.ref(`t.x${j}`);
        return [
          sql`count(${x})`.as(`c${j}`),
          sql`sum(${x})`.as(`s${j}`),
          sql`min(${x})`.as(`m${j}`),
          sql`max(${x})`.as(`M${j}`),
        ];
      }),
    ];
    const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
    const partialsRow = (row: Row): Partials => ({
      n: Number(row.n),
      e: Number(row.e),
      f: partials.fields.map((_, j) => [Number(row[`c${j}`]), num(row[`s${j}`]), num(row[`m${j}`]), num(row[`M${j}`])]),
    });
    const pass = (series: RawBuilder<unknown>, keys: ('bkt' | 'grp')[]) =>
      onIndex((trx) =>
        trx
          .selectFrom(passRows([series.as('grp')]))
          .select([...keys.map((k) => sql.ref(`t.${k}`).as(k)), ...partialColumns])
          .groupBy(keys.map((k) => sql.ref(`t.${k}`)))
          .execute(),
      ) as Promise<Row[]>;
    const [bucketRows, groupRows] = await Promise.all([
      pass(sql`0`, ['bkt']),
      grouped
        ? topGroups().then((t) => {
            top = t;
            return pass(seriesIndexOf(t.kept), ['bkt', 'grp']);
          })
        : [],
    ]);
    const total = noPartials(partials.fields.length);
    byBucket = bucketRows.map((row) => {
      const p = partialsRow(row);
      addPartials(total, p);
      return { bkt: Number(row.bkt), grp: 0, values: partials.values(p) };
    });
    overall = partials.values(total);
    byGroup = groupRows.map((row) => ({
      bkt: Number(row.bkt),
      grp: Number(row.grp),
      values: partials.values(partialsRow(row)),
    }));
  } else if (dialect === 'postgres') {
    // Two passes side by side on the read pool (one core each; an ordered-set aggregate runs in no
    // parallel plan): the totals per bucket and overall as grouping sets of one pass, and the groups
    // per bucket. Each field's percentiles come from one sort. The groups' pass reads the index (637
    // against 764 ms for the bench's summary by model); the totals' pass was slower on it.
    const totalsPass = db
      .selectFrom(passRows([sql`0`.as('grp')]))
      .select([sql`t.bkt`.as('bkt'), sql`grouping(t.bkt)`.as('lvl'), ...shape.aggregates])
      .groupBy(sql`grouping sets ((t.bkt), ())`)
      .execute() as Promise<Row[]>;
    const groupPass = async () => {
      const found = await topGroups();
      top = found;
      return (await onIndex((trx) =>
        trx
          .selectFrom(passRows([seriesIndexOf(found.kept).as('grp')]))
          .select([sql.ref('t.bkt').as('bkt'), sql.ref('t.grp').as('grp'), ...shape.aggregates])
          .groupBy([sql.ref('t.bkt'), sql.ref('t.grp')])
          .execute(),
      )) as Row[];
    };
    const [rows, groupRows] = await Promise.all([totalsPass, grouped ? groupPass() : []]);
    // grouping(bkt): 0 for a bucket's row, 1 for the overall row.
    const overallRow = rows.find((r) => Number(r.lvl) === 1);
    overall = overallRow && shape.read(overallRow);
    byBucket = rows.filter((r) => Number(r.lvl) === 0).map(pointOf);
    byGroup = groupRows.map(pointOf);
  } else {
    // One read of the range, on every reader thread a time slice of it (sqlite-summary.ts).
    if (grouped) top = await topGroups();
    const read = await summarizeSlices(
      db,
      plan,
      scope,
      metrics,
      top && top.kept.map((row) => names.map((n) => row[n])),
      (within) =>
        passRows(
          groups.map((g, i) => g.as(names[i])),
          within,
        ),
      groups.length,
    );
    overall = read.overall;
    byBucket = [...read.buckets].map(([bkt, values]) => ({ bkt, grp: 0, values }));
    byGroup = read.cells.map(({ bucket, series, values }) => ({ bkt: bucket, grp: series, values }));
  }

  const totalPoints = [emptyPoints()];
  points(byBucket, totalPoints, () => 0);
  const totals = {
    values: overall ? overall.map((v, i) => v ?? emptyValue(metrics[i])) : metrics.map(emptyValue),
    points: totalPoints[0],
  };

  let series: SummarySeries[] = [{ group: {}, other: false, points: totals.points }];
  if (top) {
    const { kept, hasOther } = top;
    const seriesPoints = [...kept, ...(hasOther ? [null] : [])].map(emptyPoints);
    points(byGroup, seriesPoints, (row) => (row.grp === -1 ? kept.length : row.grp));
    const named = kept.map((row, k) => ({
      group: Object.fromEntries(groupBy.map((f, i) => [f.name, presentGroupValue(f, row[names[i]])])),
      other: false,
      points: seriesPoints[k],
    }));
    series = hasOther ? [...named, { group: {}, other: true, points: seriesPoints[kept.length] }] : named;
  }

  const summary: Summary = {
    bucket: plan.size.name,
    tz: request.tz,
    start_time: new Date(scope.start).toISOString(),
    end_time: new Date(scope.end).toISOString(),
    metrics: metrics.map((m) => ({ field: metricName(m), agg: m.agg })),
    group_by: groupBy.map((g) => g.name),
    buckets: plan.starts.map((t) => new Date(t).toISOString()),
    series,
    totals,
    source: rolled ? 'rollups' : 'logs',
    approximate: rolled?.approximate ?? false,
    relative_error: rolled?.approximate ? RELATIVE_ERROR : null,
  };
  return summary;
}
