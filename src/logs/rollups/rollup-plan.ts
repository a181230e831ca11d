/**
 * Whether a summary can be read from the rollups, and which rows cover its range (docs/api.md
 * "Analytics"): a long range, grouped and filtered only by rollup dimensions, with metrics the rollups
 * hold; the range covered by the largest rows that never straddle one of its buckets — days, then
 * hours, then minutes — and the logs themselves for the parts of a minute at its two ends.
 */
import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { FilterNode } from '../../filters/types.js';
import type { LogScope } from '../list/scope.js';
import { LOG_FIELDS } from '../../filters/registry.js';
import type { BucketPlan } from '../summary/buckets.js';
import type { Metric, SummaryRequest } from '../summary/request.js';
import { DAY_MS, HOUR_MS, MINUTE_MS, ROLLUP_DIMENSIONS, SKETCHED_FIELDS, SUMMED_FIELDS } from './rollup-deltas.js';

/** A summary over a shorter range reads the logs: they are few, and the answer is exact. */
export const ROLLUP_MIN_RANGE_MS = 6 * HOUR_MS;

const DIMENSIONS = new Set<string>(ROLLUP_DIMENSIONS);
const SUMMED = new Set<string>(SUMMED_FIELDS);
const SKETCHED = new Set<string>(SKETCHED_FIELDS);

/** Whether every condition of the filter is on a rollup dimension. */
function onDimensions(node: FilterNode): boolean {
  if (node.kind !== 'leaf') return node.children.every(onDimensions);
  if (node.target.kind !== 'column') return false;
  const def = LOG_FIELDS.fields.get(node.target.name);
  return def !== undefined && DIMENSIONS.has(def.column);
}

/** Whether the rollups hold what a metric reads: counts and sums of every field, the rest of sketched ones. */
function heldByRollups(m: Metric): boolean {
  if (m.field === null || m.agg === 'error_rate') return true;
  if (m.field.kind !== 'column') return false;
  if (m.agg === 'count' || m.agg === 'sum' || m.agg === 'avg') return SUMMED.has(m.field.column);
  return SKETCHED.has(m.field.column);
}

/** Whether a metric's value comes from a sketch (within its relative error) rather than from sums. */
export const fromSketch = (m: Metric): boolean =>
  m.field !== null && m.agg !== 'error_rate' && m.agg !== 'count' && m.agg !== 'sum' && m.agg !== 'avg';

/** A part of the range: rollup rows of one grain, or (grain 0) the logs themselves; `to` exclusive. */
export interface Span {
  grain: number;
  from: number;
  to: number;
}

/**
 * The spans covering [from, to): at each grain the whole rows inside, the ends left to the next grain
 * down, and what no minute row covers to the logs.
 */
export function coverOf(from: number, to: number, grains: readonly number[]): Span[] {
  if (from >= to) return [];
  if (grains.length === 0) return [{ grain: 0, from, to }];
  const [grain, ...rest] = grains;
  const first = Math.ceil(from / grain) * grain;
  const last = Math.floor(to / grain) * grain;
  if (first >= last) return coverOf(from, to, rest);
  return [...coverOf(from, first, rest), { grain, from: first, to: last }, ...coverOf(last, to, rest)];
}

/**
 * The grains whose rows each fall in one bucket: those every bucket boundary inside the range is a
 * multiple of (a day row serves UTC days, not New York's; a minute row serves every bucket).
 */
export function grainsFor(plan: BucketPlan, start: number): number[] {
  const inside = plan.starts.filter((s) => s > start);
  return [DAY_MS, HOUR_MS, MINUTE_MS].filter((g) => inside.every((s) => s % g === 0));
}

/**
 * The spans to read for a summary, or null when it must read the logs: asked to, a short range, a
 * group or filter the rollups do not have, a metric they do not hold, or buckets no minute divides.
 */
export function rollupSpans(request: SummaryRequest, plan: BucketPlan): Span[] | null {
  const { scope, filter, groupBy, metrics } = request;
  if (request.exact === true) return null;
  if (scope.end - scope.start + 1 < ROLLUP_MIN_RANGE_MS) return null;
  if (groupBy.some((g) => g.kind !== 'column' || !DIMENSIONS.has(g.column))) return null;
  if (filter !== null && !onDimensions(filter)) return null;
  if (!metrics.every(heldByRollups)) return null;
  const grains = grainsFor(plan, scope.start);
  if (!grains.includes(MINUTE_MS)) return null;
  return coverOf(scope.start, scope.end + 1, grains);
}

/**
 * The database adds the rollup rows up per bucket and group (rollup-parts.ts), yet a row still costs
 * more than a log to read: it is wider, and its sketch is merged in JavaScript. Measured on a 1M-log
 * SQLite store over 30 days (bench/README.md `rollup-read`): a week's hour rows, 12.5 logs each, read in
 * 0.65–0.8 of the logs' time; a day's or 6 hours' minute rows, 1.3 logs each, in 2–3 times it. So the
 * rollups are read only where each of their rows stands for this many logs or more.
 */
export const MIN_LOGS_PER_ROW = 10;

/** Whether the rollup rows of the spans hold at least MIN_LOGS_PER_ROW logs each, on average. */
export async function rollupsFaster(db: Kysely<Database>, scope: LogScope, spans: Span[]): Promise<boolean> {
  let rows = 0;
  let logs = 0;
  for (const span of spans.filter((s) => s.grain > 0)) {
    const { rows: found } = await sql<{ r: number; n: number | null }>`
      select count(*) as r, sum(log_count) as n from log_rollups
      where organization_id = ${scope.organizationId} and grain_ms = ${span.grain}
        and bucket_start >= ${span.from} and bucket_start < ${span.to}`.execute(db);
    rows += Number(found[0].r);
    logs += Number(found[0].n ?? 0);
  }
  return rows > 0 && logs >= MIN_LOGS_PER_ROW * rows;
}
