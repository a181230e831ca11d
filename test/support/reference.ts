/**
 * A plain TypeScript reference implementation of docs/api.md "Listing logs" and "Filter language" over log items as the API returns
 * them. It shares no code with src/filters: the differential test compares the two.
 */

export type Item = Record<string, unknown> & { unique_id: string };

export interface RefFilter {
  field: string;
  operator: string;
  values: unknown[];
}

export interface RefUrlFilter extends RefFilter {
  connector: 'AND' | 'OR';
}

export interface RefQuery {
  start: number;
  end: number;
  isTest?: boolean;
  allEnvs?: boolean;
  body: RefFilter[];
  url: RefUrlFilter[];
  sort: string;
  page: number;
  pageSize: number;
}

/** Registry field → how to read it from an item, and its type. */
const FIELD_ALIASES: Record<string, string> = {
  total_tokens: 'total_request_tokens',
  all_tokens: 'total_request_tokens',
  workflow_name: 'span_workflow_name',
};
export const NUMERIC_FIELDS = new Set([
  'status_code',
  'temperature',
  'max_tokens',
  'cost',
  'latency',
  'tokens_per_second',
  'time_to_first_token',
  'prompt_tokens',
  'completion_tokens',
  'total_request_tokens',
  'total_tokens',
  'all_tokens',
  'error_count',
  'routing_time',
]);
export const BOOLEAN_FIELDS = new Set(['stream', 'failed']);
export const DATETIME_FIELDS = new Set(['timestamp', 'start_time']);

/** The operators a field takes by its type, as the differential tests draw them. */
export const TEXT_OPERATORS = ['', 'iexact', 'contains', 'icontains', 'startswith', 'endswith', 'in', 'isnull', 'not'];
export const NUMBER_OPERATORS = ['', 'lt', 'lte', 'gt', 'gte', 'in', 'isnull', 'not'];
/** A metadata value may be text or a number: both kinds of comparison. */
export const METADATA_OPERATORS = [
  '',
  'iexact',
  'lt',
  'lte',
  'gt',
  'gte',
  'contains',
  'icontains',
  'startswith',
  'endswith',
  'in',
  'isnull',
  'not',
];

type Value = string | number | boolean | null;

function read(item: Item, field: string, scores: Record<string, number>): Value {
  if (field.startsWith('metadata__')) {
    const v = (item.metadata as Record<string, unknown>)[field.slice('metadata__'.length)];
    if (v === undefined || v === null) return null;
    return typeof v === 'string' ? v : JSON.stringify(v);
  }
  if (field.startsWith('scores__')) return scores[field.slice('scores__'.length)] ?? null;
  if (field === 'error_count') return item.failed ? 1 : 0;
  if (DATETIME_FIELDS.has(field)) return item[field] === null ? null : Date.parse(item[field] as string);
  const v = item[FIELD_ALIASES[field] ?? field];
  return v === undefined ? null : (v as Value);
}

function asNumber(v: unknown): number | null {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v.trim() !== '' && /^\s*-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(v))
    return Number(v);
  return null;
}

function coerce(field: string, v: unknown): Value {
  if (field.startsWith('scores__') || NUMERIC_FIELDS.has(field)) return Number(v);
  if (BOOLEAN_FIELDS.has(field)) return v === true || v === 'true' || v === 1 || v === '1';
  if (DATETIME_FIELDS.has(field)) return Date.parse(String(v).endsWith('Z') ? String(v) : `${v}Z`);
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/**
 * `search`: every whitespace-separated term of a value is a substring, ignoring case, of one of the
 * log's strings (`item.searchStrings`, which the test keeps: what it sent as input, output, tool calls
 * and error message, every string of that JSON); values ORed; a blank value matches every log.
 */
function searchMatches(item: Item, values: unknown[]): boolean {
  const strings = ((item.searchStrings as string[] | undefined) ?? []).map((s) => s.toLowerCase());
  return values.some((v) =>
    String(v)
      .toLowerCase()
      .split(/\s+/u)
      .filter((t) => t !== '')
      .every((term) => strings.some((s) => s.includes(term))),
  );
}

export function matches(item: Item, scores: Record<string, number>, f: RefFilter): boolean {
  if (f.field === 'search') return searchMatches(item, f.values);
  const value = read(item, f.field, scores);
  let raw = f.values;
  if (f.operator === 'in' && raw.length === 1 && typeof raw[0] === 'string' && raw[0].includes(',')) {
    raw = raw[0].split(',').map((s) => s.trim());
  }
  const metadata = f.field.startsWith('metadata__');
  const range = ['lt', 'lte', 'gt', 'gte'].includes(f.operator);
  if (f.operator === 'isnull') return (value === null) === (raw[0] === true || raw[0] === 'true');
  if (f.operator === 'not') {
    if (value === null) return true;
    return raw.every((v) => coerce(f.field, v) !== value);
  }
  if (value === null) return false;
  if (range) {
    const left = metadata ? asNumber(value) : (value as number);
    if (left === null) return false;
    const right = metadata ? Number(raw[0]) : (coerce(f.field, raw[0]) as number);
    if (f.operator === 'lt') return left < right;
    if (f.operator === 'lte') return left <= right;
    if (f.operator === 'gt') return left > right;
    return left >= right;
  }
  const text = String(value);
  const needles = raw.map((v) => String(coerce(f.field, v)));
  switch (f.operator) {
    case '':
    case 'in':
      return raw.some((v) => coerce(f.field, v) === value);
    case 'iexact':
      return needles.some((n) => n.toLowerCase() === text.toLowerCase());
    case 'contains':
      return needles.some((n) => text.includes(n));
    case 'icontains':
      return needles.some((n) => text.toLowerCase().includes(n.toLowerCase()));
    case 'startswith':
      return needles.some((n) => text.startsWith(n));
    case 'endswith':
      return needles.some((n) => text.endsWith(n));
  }
  throw new Error(`reference: unknown operator ${f.operator}`);
}

const SORT_FIELDS: Record<string, string> = {
  id: 'id',
  timestamp: 'timestamp',
  cost: 'cost',
  time_to_first_token: 'time_to_first_token',
  latency: 'latency',
  prompt_tokens: 'prompt_tokens',
  completion_tokens: 'completion_tokens',
  all_tokens: 'total_request_tokens',
};

/**
 * Runs a query over all items. `rank` gives each item's internal id order (higher = stored later);
 * `scoresOf` each item's evaluator → score_value map.
 */
export function runReference(
  items: Item[],
  rank: Map<string, number>,
  scoresOf: (item: Item) => Record<string, number>,
  q: RefQuery,
): { count: number; ids: string[] } {
  const urlFields = new Set(q.url.map((f) => f.field));
  const body = q.body.filter((f) => !urlFields.has(f.field));
  const selected = items.filter((item) => {
    const ts = Date.parse(item.timestamp as string);
    if (ts < q.start || ts > q.end) return false;
    if (q.isTest !== undefined) {
      if (item.is_test !== q.isTest) return false;
    } else if (!q.allEnvs && item.is_test) return false;
    const scores = scoresOf(item);
    if (!body.every((f) => matches(item, scores, f))) return false;
    if (q.url.length === 0) return true;
    let result = matches(item, scores, q.url[0]);
    for (const f of q.url.slice(1)) {
      const next = matches(item, scores, f);
      result = f.connector === 'OR' ? result || next : result && next;
    }
    return result;
  });
  const descending = q.sort.startsWith('-');
  const name = descending ? q.sort.slice(1) : q.sort;
  // `id` is the time order, as `timestamp` is; every sort's ties follow the time order: timestamp,
  // then the internal id.
  const key = (item: Item): number | null => {
    if (name === 'id') return Date.parse(item.timestamp as string);
    if (name.startsWith('scores__')) return scoresOf(item)[name.slice('scores__'.length)] ?? null;
    const v = item[SORT_FIELDS[name]];
    if (v === null || v === undefined) return null;
    return name === 'timestamp' ? Date.parse(v as string) : (v as number);
  };
  selected.sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    if (ka === null && kb !== null) return 1;
    if (kb === null && ka !== null) return -1;
    if (ka !== null && kb !== null && ka !== kb) return descending ? kb - ka : ka - kb;
    const ta = Date.parse(a.timestamp as string);
    const tb = Date.parse(b.timestamp as string);
    if (ta !== tb) return descending ? tb - ta : ta - tb;
    const ra = rank.get(a.unique_id)!;
    const rb = rank.get(b.unique_id)!;
    return descending ? rb - ra : ra - rb;
  });
  const from = (q.page - 1) * q.pageSize;
  return { count: selected.length, ids: selected.slice(from, from + q.pageSize).map((i) => i.unique_id) };
}
