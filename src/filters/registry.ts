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
}

export interface FieldRegistry {
  /** Table the columns belong to. */
  table: string;
  fields: ReadonlyMap<string, FieldDef>;
  /** Whether metadata__<key> and scores__<id> are available. */
  metadata: boolean;
  scores: boolean;
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

const title = (name: string) =>
  name
    .replace(/__/g, ' ')
    .replace(/_/g, ' ')
    .replace(/^./, (c) => c.toUpperCase());

type Entry = [name: string, type: FieldType, options?: { column?: string; choices?: boolean; option?: boolean }];

export function buildRegistry(
  table: string,
  entries: Entry[],
  maps: { metadata: boolean; scores: boolean },
): FieldRegistry {
  const fields = new Map<string, FieldDef>();
  for (const [name, type, options = {}] of entries) {
    fields.set(name, {
      name,
      type,
      column: options.column ?? name,
      displayName: title(name),
      choices: options.choices ?? false,
      option: options.option ?? false,
    });
  }
  return { table, fields, ...maps };
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
    ['environment', 'string', S],
    ['log_type', 'string', S],
    ['stream', 'boolean'],
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
    ['routing_time', 'number'],
  ],
  { metadata: true, scores: true },
);
