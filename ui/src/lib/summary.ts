/**
 * The dashboard's and the chart strip's side of the analytics route (docs/api.md "Analytics"): the
 * summary body of a view state (its window, filters and URL quick filters, as the list reads them), the
 * dashboard's URL, and the explorer URL a click on a chart or a top-N row opens. Pure (no DOM): the
 * browser code and the node tests share it.
 */
import { FILTER_FIELDS } from './filter-fields.js';
import { MODEL_CALL_TYPES } from './log-types.js';
import {
  DEFAULT_SORT,
  formatViewState,
  quickAsConditions,
  resolveWindow,
  type Condition,
  type Operator,
  type TimeWindow,
  type ViewState,
} from './view-state.js';

export type Aggregate = 'count' | 'sum' | 'avg' | 'min' | 'max' | 'p50' | 'p90' | 'p95' | 'p99' | 'error_rate';

export interface Metric {
  field?: string;
  agg: Aggregate;
}

export type GroupValue = string | number | boolean | null;

export interface SummaryBody {
  start_time: string;
  end_time: string;
  tz: string;
  filters: Record<string, { operator: Operator; value: Condition['values'] }>;
  metrics: Metric[];
  group_by?: string[];
  limit?: number;
  /** The buckets' size (docs/api.md "Analytics"); the server picks one for the range when absent. */
  bucket?: string;
}

export interface Summary {
  bucket: string;
  tz: string;
  start_time: string;
  end_time: string;
  buckets: string[];
  series: { group: Record<string, GroupValue>; other: boolean; points: (number | null)[][] }[];
  totals: { values: (number | null)[]; points: (number | null)[][] };
  /** true: percentiles read from the rollups' sketches, each within `relative_error` of the exact one. */
  approximate?: boolean;
  relative_error?: number | null;
}

/** What a tile of percentiles says of them when they are approximate: how close they are. */
export const approximation = (summary: Pick<Summary, 'approximate' | 'relative_error'>): string | undefined =>
  summary.approximate && summary.relative_error ? `each within ${summary.relative_error * 100} %` : undefined;

/** Logs the summary's error_rate counts as failed (status code 400 or more), as a filter condition. */
export const ERRORS: Condition = { field: 'status_code', operator: 'gte', values: [400] };

/** Logs that are calls to a model, not the spans of a trace (workflow, task, tool, agent, …). */
export const MODEL_CALLS: Condition = { field: 'log_type', operator: 'in', values: [...MODEL_CALL_TYPES] };

/** Whether the state's own filters (conditions or URL quick filters) say which log types to count. */
export const picksLogTypes = (state: Pick<ViewState, 'conditions' | 'quick'>): boolean =>
  state.conditions.some((c) => c.field === 'log_type') || (state.quick ?? []).some(([name]) => name === 'log_type');

/**
 * The state the dashboard counts: its filters, and model calls only (MODEL_CALLS) unless they already
 * pick log types — a trace's workflow and tool spans are not requests, and would otherwise be counted as
 * calls of model "(none)". The explorer links carry it too, so that they list the logs counted.
 */
export function modelCallsOf<S extends Pick<ViewState, 'conditions' | 'quick'>>(state: S): S {
  return picksLogTypes(state) ? state : { ...state, conditions: [...state.conditions, MODEL_CALLS] };
}

/**
 * The summary body of a state: its window, its filters and its URL quick filters (as body filters, the
 * URL's winning as in a list); buckets in `tz`, so that days start at the reader's midnight.
 */
export function summaryBody(
  state: Pick<ViewState, 'window' | 'conditions' | 'quick'>,
  now: number,
  tz: string,
  metrics: Metric[],
  groupBy?: string,
  limit?: number,
  bucket?: string,
): SummaryBody {
  const { start, end } = resolveWindow(state.window, now);
  const filters: SummaryBody['filters'] = {};
  for (const c of [...state.conditions, ...quickAsConditions(state.quick ?? [], FILTER_FIELDS)]) {
    filters[c.field] = { operator: c.operator, value: c.values };
  }
  return {
    start_time: start,
    end_time: end,
    tz,
    filters,
    metrics,
    ...(groupBy ? { group_by: [groupBy], limit: limit ?? 10 } : {}),
    ...(bucket ? { bucket } : {}),
  };
}

/** The dashboard's query string: `v=dashboard` and the explorer's window and filters. */
export function dashboardQuery(state: Pick<ViewState, 'window' | 'conditions' | 'quick'>): string {
  const rest = formatViewState({ ...state, sort: DEFAULT_SORT, page: 1, log: null });
  return `?v=dashboard${rest === '' ? '' : `&${rest.slice(1)}`}`;
}

/** The condition that keeps one group's logs: its value, or no value at all (null). */
export function groupCondition(field: string, value: GroupValue): Condition {
  if (value === null) return { field, operator: 'isnull', values: [true] };
  return { field, operator: '', values: [value] };
}

/**
 * The explorer's query string for these logs: the state's filters with `extra` (replacing a condition
 * on the same field), over `window` when given (a bucket clicked), else the state's own window.
 */
export function explorerQuery(
  state: Pick<ViewState, 'window' | 'conditions' | 'quick'>,
  extra: Condition[],
  window?: TimeWindow,
): string {
  const fields = new Set(extra.map((c) => c.field));
  return formatViewState({
    window: window ?? state.window,
    conditions: [...state.conditions.filter((c) => !fields.has(c.field)), ...extra],
    sort: DEFAULT_SORT,
    page: 1,
    log: null,
    ...(state.quick ? { quick: state.quick } : {}),
  });
}

/** The window of bucket `i`: from its start to the next one's (or the summary's end for the last). */
export function bucketWindow(summary: Pick<Summary, 'buckets' | 'end_time'>, i: number): TimeWindow {
  const from = summary.buckets[i];
  const next = summary.buckets[i + 1];
  // The list's end_time is inclusive: a bucket ends a millisecond before the next one starts.
  const to = next ? new Date(Date.parse(next) - 1).toISOString() : summary.end_time;
  return { kind: 'absolute', from, to };
}

/** The window between two instants (a drag across a chart), earliest first, whole milliseconds. */
export function spanWindow(a: number, b: number): TimeWindow {
  const [from, to] = a <= b ? [a, b] : [b, a];
  return {
    kind: 'absolute',
    from: new Date(Math.floor(from)).toISOString(),
    to: new Date(Math.ceil(to)).toISOString(),
  };
}

/** The column of metric `m` over the buckets of a series' points. */
export const column = (points: (number | null)[][], m: number): (number | null)[] => points.map((p) => p[m] ?? null);

/**
 * The column of a sum (cost, tokens) over the buckets, for a chart: 0 where a bucket holds no log (the
 * summary answers null there), so that the line runs on through quiet buckets; a bucket whose logs have
 * no value (no price known) stays a gap. `count` is the index of the count metric.
 */
export const sumColumn = (points: (number | null)[][], m: number, count = 0): (number | null)[] =>
  points.map((p) => ((p[count] ?? 0) === 0 ? 0 : (p[m] ?? null)));

/** The sum of a column, nulls left out. */
export const total = (values: (number | null)[]): number => values.reduce<number>((s, v) => s + (v ?? 0), 0);
