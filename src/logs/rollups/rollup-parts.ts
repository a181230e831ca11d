/**
 * What a rollup summary adds up (rollup-summary.ts): per span, the rollup rows as the database added them
 * up — one row per bucket and group, counts and sums summed, sketches merged — and the logs of the ends
 * no rollup row covers.
 */
import { type Kysely, sql } from 'kysely';
import type { DialectName } from '../../db/connect.js';
import type { Database } from '../../db/schema.js';
import type { FilterNode } from '../../filters/types.js';
import { filterCondition, filteredLogs } from '../list/list.js';
import type { BucketPlan } from '../summary/buckets.js';
import type { SummaryRequest } from '../summary/request.js';
import { bucketExpr } from '../summary/sql.js';
import { SKETCH_SUM } from '../../db/sqlite-aggregates/sketch-sum.js';
import { SQLITE_READERS } from '../../db/sqlite-read-dialect.js';
import {
  MINUTE_MS,
  ROLLUP_SOURCE_COLUMNS,
  type RollupKind,
  type RollupSource,
  rollupDeltas,
  SKETCHED_FIELDS,
  SUMMED_FIELDS,
} from './rollup-deltas.js';
import type { Span } from './rollup-plan.js';
import type { Bins } from './sketch.js';

type Row = Record<string, unknown>;

/**
 * A bucket and group's rollup rows as the database added them up (or the logs of one minute at an end of
 * the range): its sketches as the database merged them (DenseSketch.addStored reads them into the one
 * cell they are added to) or, for logs, as bins; '' where no metric reads the sketch.
 */
export interface Part {
  n: number;
  e: number;
  /** Per SUMMED_FIELDS [values, sum]. */
  sums: [number, number][];
  /** The bucket's number (plan.indexOf); 0 in a read of whole groups. */
  bkt: number;
  /** Dimension column → value. */
  dims: Row;
  /** In a read by series: the index of its top group, or −1 (the others). */
  grp?: number;
  bins: (Bins | string | Uint8Array)[];
}

/**
 * A group's stored sketches as one value DenseSketch.addStored reads: on SQLite merged by
 * gatelog_sketch_sum on the reader thread (packed); on PostgreSQL the texts end to end (string_agg, its
 * own C aggregate), which the parse reads as one — faster than merging them in SQL there
 * (docs/decisions.md "Rollups for long summaries", bench/README.md `rollup-read`).
 */
export const groupSketches = (dialect: DialectName, column: string) =>
  dialect === 'postgres' ? sql`string_agg(${sql.ref(column)}, '')` : sql`${sql.raw(SKETCH_SUM)}(${sql.ref(column)})`;

/** A span's rows split into pieces of at least this many of its grains (a week of hours: five). */
const MIN_PIECE_GRAINS = 32;

/**
 * The spans cut into pieces read side by side, as the exact path reads time slices (sqlite-summary.ts):
 * on SQLite one per reader thread, each merging its rows' sketches on its own core. A bucket two pieces
 * share gets a row from each, added up like any other part. PostgreSQL reads each span whole.
 */
function piecesOf(dialect: DialectName, spans: Span[]): Span[] {
  if (dialect !== 'sqlite') return spans;
  return spans.flatMap((span) => {
    const grains = (span.to - span.from) / span.grain;
    const count = Math.min(SQLITE_READERS, Math.max(1, Math.floor(grains / MIN_PIECE_GRAINS)));
    return Array.from({ length: count }, (_, k) => ({
      grain: span.grain,
      from: span.from + Math.floor((grains * k) / count) * span.grain,
      to: span.from + Math.floor((grains * (k + 1)) / count) * span.grain,
    }));
  });
}

/**
 * How rollupParts adds the rows up: per bucket and group; per group over the whole spans (to rank the
 * groups); or per bucket and series — each of the `kept` groups (their values in group_by order) its
 * own, the rest as one (grp −1).
 */
export type PartsBy = { by: 'bucket' } | { by: 'group' } | { by: 'series'; kept: unknown[][] };

/**
 * The rollup rows of the spans, in the scope and matching the filter, added up by the database: one
 * row per bucket and group (or as `by` says), counts and sums summed, sketches merged — not one per
 * stored row.
 */
export async function rollupParts(
  db: Kysely<Database>,
  dialect: DialectName,
  request: SummaryRequest,
  plan: BucketPlan,
  kind: RollupKind,
  spans: Span[],
  sketched: readonly boolean[],
  by: PartsBy = { by: 'bucket' },
): Promise<Part[]> {
  const { scope, filter } = request;
  const condition = filterCondition(dialect, scope, filter);
  const groups = [...new Set(request.groupBy.map((g) => (g.kind === 'column' ? g.column : '')))];
  // Only the sums a metric reads (a ranking only the counts): each is a column of every row read.
  const read = new Set(request.metrics.flatMap((m) => (m.field?.kind === 'column' ? [m.field.column] : [])));
  const fields = by.by === 'group' ? [] : SUMMED_FIELDS.filter((f) => read.has(f));
  const summed = ['log_count', 'failed_count', ...fields.flatMap((f) => [`${f}_n`, `${f}_sum`])];
  const bucket = bucketExpr(plan, scope.start, scope.end, 'logs.bucket_start');
  const columns = request.groupBy.map((g) => sql.ref(`logs.${g.kind === 'column' ? g.column : ''}`));
  // The series as the database picks it: the index of the first kept group the row's values are.
  const series =
    by.by === 'series' && by.kept.length > 0
      ? sql`(case ${sql.join(
          by.kept.map(
            (values, k) =>
              sql`when ${sql.join(
                columns.map((c, i) => sql`${c} = ${values[i]}`),
                sql` and `,
              )} then ${sql.lit(k)}`,
          ),
          sql` `,
        )} else -1 end)`
      : sql`-1`;
  const keys =
    by.by === 'group'
      ? groups.map((c) => sql.ref(`logs.${c}`))
      : by.by === 'series'
        ? [sql.ref('bkt'), sql.ref('grp')]
        : [sql.ref('bkt'), ...groups.map((c) => sql.ref(`logs.${c}`))];
  // One read per span, each a range of the key index (organization, grain, bucket): an OR of the spans
  // in one statement read every row of the organization instead.
  const readSpan = (span: Span) => {
    let query = db
      .selectFrom(`${kind.table} as logs` as 'log_rollups as logs')
      .select([
        (by.by === 'group' ? sql`0` : bucket).as('bkt'),
        ...(by.by === 'series' ? [series.as('grp')] : groups.map((c) => sql.ref(`logs.${c}`).as(c))),
        ...summed.map((c) => sql`sum(${sql.ref(`logs.${c}`)})`.as(c)),
        // Only the sketches a metric reads: merging one is most of a row's cost.
        ...SKETCHED_FIELDS.filter((_, i) => sketched[i]).map((f) =>
          groupSketches(dialect, `logs.${f}_bins`).as(`${f}_bins`),
        ),
      ])
      .where('logs.organization_id', '=', scope.organizationId)
      .where('logs.grain_ms', '=', span.grain)
      .where('logs.bucket_start', '>=', span.from)
      .where('logs.bucket_start', '<', span.to);
    if (scope.isTest !== null) query = query.where('logs.is_test', '=', scope.isTest ? 1 : 0);
    if (condition) query = query.where(condition);
    return (keys.length > 0 ? query.groupBy(keys) : query).execute() as Promise<Row[]>;
  };
  const rows = (await Promise.all(piecesOf(dialect, spans).map(readSpan))).flat();
  return rows
    .filter((r) => r.log_count !== null)
    .map((r) => ({
      bkt: Number(r.bkt),
      dims: r,
      ...(by.by === 'series' ? { grp: Number(r.grp) } : {}),
      n: Number(r.log_count),
      e: Number(r.failed_count),
      sums: SUMMED_FIELDS.map((f) => [Number(r[`${f}_n`] ?? 0), Number(r[`${f}_sum`] ?? 0)]),
      bins: SKETCHED_FIELDS.map((f, i) => (sketched[i] ? ((r[`${f}_bins`] as string | Uint8Array | null) ?? '') : '')),
    }));
}

/**
 * The logs of the ends no rollup row covers, as parts of one minute each (a minute lies in one bucket
 * whatever the table's smallest grain), per the table's dimensions.
 */
export async function logParts(
  db: Kysely<Database>,
  dialect: DialectName,
  request: SummaryRequest,
  plannedFilter: FilterNode | null,
  kind: RollupKind,
  spans: Span[],
  bucketOf: (start: number) => number,
): Promise<Part[]> {
  const perMinute: RollupKind = { ...kind, grains: [MINUTE_MS] };
  const parts: Part[] = [];
  for (const span of spans) {
    const within = { ...request.scope, start: span.from, end: span.to - 1 };
    const logs = (await filteredLogs(db, dialect, within, plannedFilter)
      .select(ROLLUP_SOURCE_COLUMNS.map((c) => sql.ref(`logs.${c}`).as(c)))
      .execute()) as RollupSource[];
    const added = logs.map((l) => ({ ...l, timestamp: Number(l.timestamp) }));
    for (const d of rollupDeltas(added, [], [perMinute])) {
      const dims: Row = {};
      kind.dimensions.forEach((c, i) => (dims[c] = d.dims[i]));
      parts.push({
        bkt: bucketOf(d.bucket_start),
        dims,
        n: d.log_count,
        e: d.failed_count,
        sums: d.sums,
        bins: SKETCHED_FIELDS.map((f) => {
          const k = kind.sketched.indexOf(f);
          return k < 0 ? '' : d.bins[k];
        }),
      });
    }
  }
  return parts;
}
