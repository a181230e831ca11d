/**
 * A second reference model, for the dataset-log list (docs/api.md "Dataset logs", "Filter language"),
 * written apart from reference.ts and from src/filters: each filter becomes a predicate built from a
 * table of field kinds, over dataset-log items as the API returns them.
 */

export type DatasetItem = Record<string, unknown> & { id: string; metadata: Record<string, unknown> };

export interface Condition {
  field: string;
  operator: string;
  values: unknown[];
}

export interface DatasetQuery {
  body: Condition[];
  /** URL filters, folded left to right by their connectors. */
  url: (Condition & { connector: 'AND' | 'OR' })[];
  orderBy: string;
  page: number;
  pageSize: number;
}

type Kind = 'text' | 'int' | 'real' | 'time' | 'meta';

const KINDS: Record<string, Kind> = {
  model: 'text',
  status: 'text',
  environment: 'text',
  annotation_status: 'text',
  log_type: 'text',
  status_code: 'int',
  prompt_tokens: 'int',
  completion_tokens: 'int',
  total_request_tokens: 'int',
  cost: 'real',
  latency: 'real',
  timestamp: 'time',
  start_time: 'time',
};

const kindOf = (field: string): Kind => (field.startsWith('metadata__') ? 'meta' : KINDS[field]);

/** The item's value as the filter sees it: text, a number, or null when absent. */
function valueOf(item: DatasetItem, field: string): string | number | null {
  const kind = kindOf(field);
  if (kind === 'meta') {
    const v = item.metadata[field.slice('metadata__'.length)];
    if (v === undefined || v === null) return null;
    return typeof v === 'string' ? v : JSON.stringify(v);
  }
  const v = item[field];
  if (v === null || v === undefined) return null;
  return kind === 'time' ? new Date(v as string).getTime() : (v as string | number);
}

/** A filter value in the field's terms. */
function operand(kind: Kind, raw: unknown): string | number {
  switch (kind) {
    case 'int':
    case 'real':
      return typeof raw === 'number' ? raw : Number(raw);
    case 'time': {
      const text = String(raw);
      return new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(text) ? text : `${text}Z`).getTime();
    }
    default:
      return typeof raw === 'string' ? raw : JSON.stringify(raw);
  }
}

const NUMERIC_TEXT = /^\s*-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;

type Predicate = (item: DatasetItem) => boolean;

function predicate(c: Condition): Predicate {
  const kind = kindOf(c.field);
  const listed =
    c.operator === 'in' && c.values.length === 1 && typeof c.values[0] === 'string' && c.values[0].includes(',')
      ? c.values[0].split(',').map((s) => s.trim())
      : c.values;
  const wanted = listed.map((v) => operand(kind, v));
  const get = (item: DatasetItem) => valueOf(item, c.field);
  const present =
    (test: (v: string | number) => boolean): Predicate =>
    (item) => {
      const v = get(item);
      return v !== null && test(v);
    };
  const textual = (test: (text: string, needle: string) => boolean) =>
    present((v) => wanted.some((w) => test(String(v), String(w))));
  const ranged = (test: (a: number, b: number) => boolean) =>
    present((v) => {
      const left = kind === 'meta' ? (NUMERIC_TEXT.test(String(v)) ? Number(v) : null) : Number(v);
      return left !== null && test(left, kind === 'meta' ? Number(listed[0]) : Number(wanted[0]));
    });
  switch (c.operator) {
    case '':
    case 'in':
      return present((v) => wanted.includes(v));
    case 'not':
      return (item) => {
        const v = get(item);
        return v === null || !wanted.includes(v);
      };
    case 'isnull': {
      const wantNull = listed[0] === true || listed[0] === 'true';
      return (item) => (get(item) === null) === wantNull;
    }
    case 'lt':
      return ranged((a, b) => a < b);
    case 'lte':
      return ranged((a, b) => a <= b);
    case 'gt':
      return ranged((a, b) => a > b);
    case 'gte':
      return ranged((a, b) => a >= b);
    case 'iexact':
      return textual((t, n) => t.toLowerCase() === n.toLowerCase());
    case 'contains':
      return textual((t, n) => t.includes(n));
    case 'icontains':
      return textual((t, n) => t.toLowerCase().includes(n.toLowerCase()));
    case 'startswith':
      return textual((t, n) => t.startsWith(n));
    case 'endswith':
      return textual((t, n) => t.endsWith(n));
    default:
      throw new Error(`dataset reference: operator ${c.operator}`);
  }
}

function sortKey(item: DatasetItem, name: string): string | number | null {
  if (name === 'unique_id') return Number(item.id);
  const v = item[name];
  if (v === null || v === undefined) return null;
  return kindOf(name) === 'time' ? new Date(v as string).getTime() : (v as string | number);
}

export function datasetReference(items: DatasetItem[], q: DatasetQuery): { count: number; ids: string[] } {
  const urlFields = new Set(q.url.map((c) => c.field));
  const body = q.body.filter((c) => !urlFields.has(c.field)).map(predicate);
  const url = q.url.map((c) => ({ test: predicate(c), connector: c.connector }));
  const kept = items.filter(
    (item) =>
      body.every((p) => p(item)) &&
      url.reduce<boolean | null>(
        (acc, u) => (acc === null ? u.test(item) : u.connector === 'OR' ? acc || u.test(item) : acc && u.test(item)),
        null,
      ) !== false,
  );
  const descending = q.orderBy.startsWith('-');
  const name = q.orderBy.replace(/^-/, '');
  const sign = descending ? -1 : 1;
  kept.sort((x, y) => {
    const [a, b] = [sortKey(x, name), sortKey(y, name)];
    if (a === null || b === null) {
      if (a !== b) return a === null ? 1 : -1; // nulls last, both ways
    } else if (a !== b) {
      return (a < b ? -1 : 1) * sign;
    }
    return (Number(x.id) - Number(y.id)) * sign;
  });
  const start = (q.page - 1) * q.pageSize;
  return { count: kept.length, ids: kept.slice(start, start + q.pageSize).map((i) => i.id) };
}
