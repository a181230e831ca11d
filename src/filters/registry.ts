/**
 * The field registry: the single source of what can be filtered, sorted and offered as a filter
 * option, with each field's type and column. Parsing, validation, SQL compilation, sorting and
 * filter_options all read it; adding a filterable field is one entry.
 */
import { type FieldType, type Operator, OPERATORS } from './types.js';

export interface FieldDef {
  name: string;
  type: FieldType;
  /** Column of the list's main table holding the value (booleans are 0/1, datetimes epoch ms). */
  column: string;
  displayName: string;
  /** Whether filter_options lists its most frequent values. */
  choices?: boolean;
  /** Whether filter_options shows the field at all. */
  option?: boolean;
  /**
   * A choice field whose column may be null (error_code): the facet counts keep no null, so they cannot
   * say that every log holds one of its values. Choice fields only; the others do not say.
   */
  nullable?: boolean;
}

/** Where a list's map fields live: rows of (log_id, organization_id, key, value_text, value_num). */
export interface SideTables {
  /** metadata__<key> filters; null: the list has no metadata. */
  metadata: string | null;
  /** scores__<evaluator_id> filters and sorts: rows of (log_id, evaluator_id, score_value); null: none. */
  scores: string | null;
}

/** Everything a list needs to parse, check, compile and sort its filters: one per list. */
export interface FieldRegistry {
  /** Table the columns belong to. */
  table: string;
  fields: ReadonlyMap<string, FieldDef>;
  /** Whether metadata__<key> and scores__<id> are available (their side tables are set). */
  metadata: boolean;
  scores: boolean;
  /** Whether the `search` field (the log's words, through the search index) is available. */
  search: boolean;
  sideTables: SideTables;
  /** Sortable names → column, in the order an error message lists them (a Map: no prototype keys). */
  sortable: ReadonlyMap<string, string>;
  /** The sort when none is asked for, e.g. "-id". */
  defaultSort: string;
  /** The query parameter naming the sort, then its aliases. */
  sortParams: readonly string[];
  /** The list's own query parameters: never read as URL quick filters. */
  reservedParams: ReadonlySet<string>;
}

export const OPERATORS_BY_TYPE: Record<FieldType, readonly Operator[]> = {
  string: ['', 'iexact', 'contains', 'icontains', 'startswith', 'endswith', 'in', 'isnull', 'not'],
  integer: ['', 'lt', 'lte', 'gt', 'gte', 'in', 'isnull', 'not'],
  number: ['', 'lt', 'lte', 'gt', 'gte', 'in', 'isnull', 'not'],
  datetime: ['', 'lt', 'lte', 'gt', 'gte', 'in', 'isnull', 'not'],
  boolean: ['', 'in', 'isnull', 'not'],
};

/** Metadata values are text, compared numerically by lt/lte/gt/gte: every operator applies. */
export const METADATA_OPERATORS: readonly Operator[] = OPERATORS;
export const SCORE_OPERATORS: readonly Operator[] = ['', 'gt', 'gte', 'lt', 'lte', 'not'];
/** `search`: every term of a value, ORed over values (docs/api.md "Filter language"). */
export const SEARCH_OPERATORS: readonly Operator[] = [''];

const title = (name: string) =>
  name
    .replace(/__/g, ' ')
    .replace(/_/g, ' ')
    .replace(/^./, (c) => c.toUpperCase());

type Entry = [
  name: string,
  type: FieldType,
  options?: { column?: string; choices?: boolean; option?: boolean; nullable?: boolean },
];

interface ListShape {
  sideTables: SideTables;
  sortable: [name: string, column: string][];
  defaultSort: string;
  sortParams: string[];
  /** Query parameters of the list besides paging and sorting. */
  params: string[];
  search?: boolean;
}

export function buildRegistry(table: string, entries: Entry[], shape: ListShape): FieldRegistry {
  const fields = new Map<string, FieldDef>();
  for (const [name, type, options = {}] of entries) {
    fields.set(name, {
      name,
      type,
      column: options.column ?? name,
      displayName: title(name),
      choices: options.choices ?? false,
      option: options.option ?? false,
      nullable: options.nullable ?? false,
    });
  }
  return {
    table,
    fields,
    metadata: shape.sideTables.metadata !== null,
    scores: shape.sideTables.scores !== null,
    search: shape.search ?? false,
    sideTables: shape.sideTables,
    sortable: new Map(shape.sortable),
    defaultSort: shape.defaultSort,
    sortParams: shape.sortParams,
    reservedParams: new Set(['page', 'page_size', ...shape.sortParams, ...shape.params]),
  };
}

const S = { choices: true, option: true };
const N = { option: true };

/** Request logs: the fields of docs/api.md "Filter language". */
export const LOG_FIELDS = buildRegistry(
  'logs',
  [
    ['customer_identifier', 'string', S],
    ['custom_identifier', 'string'],
    ['thread_identifier', 'string'],
    ['prompt_id', 'string'],
    ['unique_id', 'string'],
    ['trace_unique_id', 'string'],
    ['span_name', 'string'],
    ['span_workflow_name', 'string'],
    ['model', 'string', S],
    ['deployment_name', 'string'],
    ['provider_id', 'string', S],
    ['status_code', 'integer', S],
    ['status', 'string', S],
    ['error_message', 'string'],
    ['error_code', 'string', { ...S, nullable: true }],
    ['environment', 'string', S],
    ['log_type', 'string', S],
    ['stream', 'boolean'],
    ['fallback_used', 'boolean'],
    ['cache_hit', 'boolean'],
    ['temperature', 'number'],
    ['max_tokens', 'integer'],
    ['cost', 'number', N],
    ['latency', 'number', N],
    ['tokens_per_second', 'number'],
    ['time_to_first_token', 'number'],
    ['prompt_tokens', 'integer', N],
    ['completion_tokens', 'integer', N],
    ['total_request_tokens', 'integer'],
    ['total_tokens', 'integer', { column: 'total_request_tokens' }],
    ['all_tokens', 'integer', { column: 'total_request_tokens' }],
    ['customer_email', 'string'],
    ['workflow_name', 'string', { column: 'span_workflow_name' }],
    ['error_count', 'integer', { column: 'failed' }],
    ['failed', 'boolean'],
    ['timestamp', 'datetime'],
    ['start_time', 'datetime'],
    ['foundation_model', 'string'],
    ['organization_key__name', 'string', { column: 'organization_key_name' }],
    ['api_key_id', 'string', { nullable: true }],
    ['routing_time', 'number'],
  ],
  {
    sideTables: { metadata: 'log_metadata', scores: 'scores' },
    search: true,
    // `id` is the time order, as `timestamp` is (docs/decisions.md "Time order"): the list adds the
    // row id after every sort column, so both are (timestamp, id).
    sortable: [
      ['id', 'timestamp'],
      ['timestamp', 'timestamp'],
      ['cost', 'cost'],
      ['time_to_first_token', 'time_to_first_token'],
      ['latency', 'latency'],
      ['prompt_tokens', 'prompt_tokens'],
      ['completion_tokens', 'completion_tokens'],
      ['all_tokens', 'total_request_tokens'],
    ],
    defaultSort: '-id',
    sortParams: ['sort_by'],
    // order_by, the dataset-log list's sort parameter, is never a filter here either; count and cursor
    // are the list's keyset paging (a metadata key of those names is filtered as metadata__count).
    params: [
      ...['order_by', 'start_time', 'end_time', 'all_envs', 'is_test', 'fetch_filters', 'include_fields'],
      ...['count', 'cursor'],
    ],
  },
);
