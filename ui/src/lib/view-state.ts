/**
 * What the log explorer shows, as it is kept in the page's URL: the URL is the one source of truth, so a
 * reload, back and forward, and a pasted link all restore the same screen. Pure (no DOM): the browser
 * code and the node tests share it.
 *
 *   ?range=1h&at=2026-11-24T22:00:00.000Z&filters=[...]&sort=-cost&page=2&log=<unique_id>
 *
 * - `range` is a preset or typed window ("15m", "90m", "3d"); `at` anchors it (the window's end), so that
 *   paging through a relative window does not drift while new logs arrive. Without `at` the window ends
 *   now. `from`/`to` (ISO 8601) give an absolute window instead.
 * - `filters` is the list API's filter language, one condition per field, as JSON.
 */

export type Operator =
  | ''
  | 'iexact'
  | 'contains'
  | 'icontains'
  | 'startswith'
  | 'endswith'
  | 'lt'
  | 'lte'
  | 'gt'
  | 'gte'
  | 'in'
  | 'isnull'
  | 'not';

export interface Condition {
  field: string;
  operator: Operator;
  values: (string | number | boolean)[];
}

export type TimeWindow =
  { kind: 'relative'; span: string; at: string | null } | { kind: 'absolute'; from: string; to: string };

export interface ViewState {
  window: TimeWindow;
  conditions: Condition[];
  sort: string;
  page: number;
  /** The log open in the detail panel. */
  log: string | null;
  /**
   * Any other parameter of the page's URL (`?feature=search`, `?model[value]=x`): the API's URL quick
   * filters, passed on to the list call as they are, so that a list URL's filters pasted onto the UI's
   * address work there too. Absent when there are none.
   */
  quick?: [name: string, value: string][];
}

/**
 * Page parameters that are not quick filters: the UI's own (the explorer's, and the other screens' v, id
 * and item), and the list's parameters, which the UI sets itself. The Sessions page's `session` is its
 * own only there (OWN_ON_SCREEN): elsewhere `?session=…` filters metadata, as the API reads it.
 */
const NOT_QUICK = new Set([
  ...['range', 'at', 'from', 'to', 'filters', 'sort', 'page', 'log', 'v', 'id', 'item'],
  ...['page_size', 'sort_by', 'order_by', 'start_time', 'end_time', 'all_envs', 'is_test', 'fetch_filters'],
  ...['include_fields', 'count', 'cursor'],
]);

/** A screen's own parameters besides those: not quick filters on that screen (`v`). */
const OWN_ON_SCREEN: Record<string, readonly string[]> = { sessions: ['session'] };

export const PRESETS = ['15m', '1h', '24h', '7d', '30d'] as const;
export const DEFAULT_SORT = '-id';
const DEFAULT_SPAN = '1h';
const OPERATORS: readonly Operator[] = [
  '',
  'iexact',
  'contains',
  'icontains',
  'startswith',
  'endswith',
  'lt',
  'lte',
  'gt',
  'gte',
  'in',
  'isnull',
  'not',
];
const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds a typed window ("90m", "3d", "1h") spans, or null when it is not one. */
export function spanMs(span: string): number | null {
  const match = /^(\d{1,6})([mhd])$/.exec(span.trim());
  if (!match) return null;
  const ms = Number(match[1]) * UNIT_MS[match[2]];
  return ms > 0 ? ms : null;
}

const isIso = (text: string | null): text is string => text !== null && !Number.isNaN(Date.parse(text));

function parseConditions(text: string | null): Condition[] {
  if (!text) return [];
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(raw)) return [];
  const seen = new Set<string>();
  const out: Condition[] = [];
  for (const item of raw) {
    if (item === null || typeof item !== 'object') continue;
    const { field, operator, values } = item as Record<string, unknown>;
    if (typeof field !== 'string' || field === '' || seen.has(field)) continue;
    const op = (typeof operator === 'string' ? operator : '') as Operator;
    if (!OPERATORS.includes(op) || !Array.isArray(values) || values.length === 0) continue;
    if (!values.every((v) => ['string', 'number', 'boolean'].includes(typeof v))) continue;
    seen.add(field);
    out.push({ field, operator: op, values: values as Condition['values'] });
  }
  return out;
}

/** The state a query string describes; anything missing or unreadable takes its default. */
export function parseViewState(search: string): ViewState {
  const q = new URLSearchParams(search);
  const from = q.get('from');
  const to = q.get('to');
  const span = q.get('range');
  const at = q.get('at');
  const window: TimeWindow =
    isIso(from) && isIso(to) && Date.parse(from) <= Date.parse(to)
      ? { kind: 'absolute', from, to }
      : { kind: 'relative', span: span && spanMs(span) !== null ? span : DEFAULT_SPAN, at: isIso(at) ? at : null };
  const page = Number(q.get('page') ?? '1');
  const sort = q.get('sort');
  const own = OWN_ON_SCREEN[q.get('v') ?? ''] ?? [];
  const quick = [...q].filter(([name]) => !NOT_QUICK.has(name) && !own.includes(name) && name !== '');
  return {
    window,
    conditions: parseConditions(q.get('filters')),
    sort: sort && /^-?[a-z_]+(__[\w-]+)?$/.test(sort) ? sort : DEFAULT_SORT,
    page: Number.isInteger(page) && page >= 1 ? page : 1,
    log: q.get('log') || null,
    ...(quick.length > 0 ? { quick } : {}),
  };
}

/** The query string (with its "?", or "" for the defaults) of a state; parseViewState reads it back. */
export function formatViewState(state: ViewState): string {
  const q = new URLSearchParams();
  if (state.window.kind === 'absolute') {
    q.set('from', state.window.from);
    q.set('to', state.window.to);
  } else {
    if (state.window.span !== DEFAULT_SPAN) q.set('range', state.window.span);
    if (state.window.at) q.set('at', state.window.at);
  }
  if (state.conditions.length > 0) q.set('filters', JSON.stringify(state.conditions));
  if (state.sort !== DEFAULT_SORT) q.set('sort', state.sort);
  if (state.page !== 1) q.set('page', String(state.page));
  if (state.log) q.set('log', state.log);
  for (const [name, value] of state.quick ?? []) q.append(name, value);
  const text = q.toString();
  return text === '' ? '' : `?${text}`;
}

/** The window's start and end as ISO 8601, a relative one ending at its anchor, else at `now`. */
export function resolveWindow(window: TimeWindow, now: number): { start: string; end: string } {
  if (window.kind === 'absolute') return { start: window.from, end: window.to };
  const end = window.at ? Date.parse(window.at) : now;
  return { start: new Date(end - (spanMs(window.span) ?? 3_600_000)).toISOString(), end: new Date(end).toISOString() };
}

/** The list call for a state: its query string and its body (the filter language). */
export function listRequest(
  state: ViewState,
  now: number,
  pageSize: number,
): { query: string; body: { filters: Record<string, { operator: Operator; value: Condition['values'] }> } } {
  const { start, end } = resolveWindow(state.window, now);
  const q = new URLSearchParams({
    start_time: start,
    end_time: end,
    page: String(state.page),
    page_size: String(pageSize),
    sort_by: state.sort,
  });
  for (const [name, value] of state.quick ?? []) q.append(name, value);
  const filters: Record<string, { operator: Operator; value: Condition['values'] }> = {};
  for (const c of state.conditions) filters[c.field] = { operator: c.operator, value: c.values };
  return { query: `?${q.toString()}`, body: { filters } };
}

/**
 * URL quick filters as body filters, read as the API reads them (docs/api.md "URL quick filters"): a
 * filter-language field filters itself, metadata__ and scores__ names their map, any other name a
 * metadata key; `name[value]` and `name[operator]` (\'\' or not) give one filter.
 */
export function quickAsConditions(quick: readonly [string, string][], fields: readonly string[]): Condition[] {
  const byName = new Map<string, { value?: string; operator: Operator }>();
  for (const [param, value] of quick) {
    const match = /^(.+)\[(value|operator|connector)\]$/.exec(param);
    const name = match ? match[1] : param;
    const entry = byName.get(name) ?? { operator: '' };
    if (!match || match[2] === 'value') entry.value = value;
    else if (match[2] === 'operator' && value === 'not') entry.operator = 'not';
    byName.set(name, entry);
  }
  const out: Condition[] = [];
  for (const [name, { value, operator }] of byName) {
    if (value === undefined) continue;
    const field = fields.includes(name) || /^(metadata|scores)__./.test(name) ? name : `metadata__${name}`;
    out.push({ field, operator, values: [value] });
  }
  return out;
}

/** A text for a POSIX shell holding `text` exactly (single quotes; a quote inside as '\''). */
export const shellQuote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;

/**
 * The list call of a state as a curl command, for a script or a bug report. The key is left as
 * $GATELOG_KEY: a command copied from the UI never carries one.
 */
export function curlFor(apiRoot: string, state: ViewState, now: number, pageSize: number): string {
  const { query, body } = listRequest(state, now, pageSize);
  return [
    `curl -s -X POST ${shellQuote(`${apiRoot}request-logs/list/${query}`)}`,
    `-H "Authorization: Bearer $GATELOG_KEY"`,
    `-H 'Content-Type: application/json'`,
    `-d ${shellQuote(JSON.stringify(body))}`,
  ].join(' \\\n  ');
}
