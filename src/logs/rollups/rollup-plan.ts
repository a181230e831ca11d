/**
 * Whether a summary can be read from a rollup table, which (rollup-kinds.ts: the first that can answer),
 * and which rows cover its range (docs/api.md "Analytics"): a long range, grouped and filtered only by
 * the table's dimensions, with metrics it holds; the range covered by the largest rows that never
 * straddle one of its buckets — days, then hours, then (log_rollups) minutes — and the logs themselves
 * for the parts of its smallest grain at its two ends.
 */
import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { FilterNode } from '../../filters/types.js';
import type { LogScope } from '../list/scope.js';
import { LOG_FIELDS } from '../../filters/registry.js';
import type { BucketPlan } from '../summary/buckets.js';
import type { Metric, SummaryRequest } from '../summary/request.js';
import { DAY_MS, HOUR_MS, MINUTE_MS, ROLLUP_KINDS, type RollupKind, SUMMED_FIELDS } from './rollup-kinds.js';

/** A summary over a shorter range reads the logs: they are few, and the answer is exact. */
export const ROLLUP_MIN_RANGE_MS = 6 * HOUR_MS;

const SUMMED = new Set<string>(SUMMED_FIELDS);

/** Whether every condition of the filter is on one of the dimensions. */
function onDimensions(node: FilterNode, dimensions: ReadonlySet<string>): boolean {
  if (node.kind !== 'leaf') return node.children.every((child) => onDimensions(child, dimensions));
  if (node.target.kind !== 'column') return false;
  const def = LOG_FIELDS.fields.get(node.target.name);
  return def !== undefined && dimensions.has(def.column);
}

/** Whether a table holds what a metric reads: counts and sums of every field, the rest of its sketched ones. */
function heldBy(kind: RollupKind, m: Metric): boolean {
  if (m.field === null || m.agg === 'error_rate') return true;
  if (m.field.kind !== 'column') return false;
  if (m.agg === 'count' || m.agg === 'sum' || m.agg === 'avg') return SUMMED.has(m.field.column);
  return (kind.sketched as readonly string[]).includes(m.field.column);
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

/** A table that can answer a summary, and the spans of the range to read from it (and from the logs). */
export interface RollupRead {
  kind: RollupKind;
  spans: Span[];
}

/** The spans of `kind` for a summary, or null when it cannot answer it. */
function spansOf(kind: RollupKind, request: SummaryRequest, plan: BucketPlan): Span[] | null {
  const { scope, filter, groupBy, metrics } = request;
  const dimensions = new Set<string>(kind.dimensions);
  if (groupBy.some((g) => g.kind !== 'column' || !dimensions.has(g.column))) return null;
  if (filter !== null && !onDimensions(filter, dimensions)) return null;
  if (!metrics.every((m) => heldBy(kind, m))) return null;
  const grains = grainsFor(plan, scope.start).filter((g) => kind.grains.includes(g));
  if (!grains.includes(kind.grains[0])) return null;
  return coverOf(scope.start, scope.end + 1, grains);
}

/**
 * The table and spans to read for a summary, or null when it must read the logs: asked to, a short
 * range, or no table that has its groups and filters, holds its metrics and has rows that fit its
 * buckets (no minute divides them; for customers, no hour).
 */
export function rollupRead(request: SummaryRequest, plan: BucketPlan): RollupRead | null {
  if (request.exact === true) return null;
  if (request.scope.end - request.scope.start + 1 < ROLLUP_MIN_RANGE_MS) return null;
  for (const kind of ROLLUP_KINDS) {
    const spans = spansOf(kind, request, plan);
    if (spans) return { kind, spans };
  }
  return null;
}

/**
 * Whether the table's rows of the spans hold at least its minLogsPerRow logs each, on average: the
 * database adds the rows up per bucket and group (rollup-parts.ts), yet a row still costs more than a
 * log to read (wider, and log_rollups' sketches are merged in JavaScript).
 */
export async function rollupsFaster(db: Kysely<Database>, read: RollupRead, scope: LogScope): Promise<boolean> {
  let rows = 0;
  let logs = 0;
  for (const span of read.spans.filter((s) => s.grain > 0)) {
    const { rows: found } = await sql<{ r: number; n: number | null }>`
      select count(*) as r, sum(log_count) as n from ${sql.table(read.kind.table)}
      where organization_id = ${scope.organizationId} and grain_ms = ${span.grain}
        and bucket_start >= ${span.from} and bucket_start < ${span.to}`.execute(db);
    rows += Number(found[0].r);
    logs += Number(found[0].n ?? 0);
  }
  return rows > 0 && logs >= read.kind.minLogsPerRow * rows;
}
