/**
 * The rows of one list page, read with a bounded size. Bodies are stored whole (a log's input may be
 * 20 MB), but a list page of 1,000 such logs cannot be held, nor sent: lists read the first
 * LIST_PREVIEW_CHARS characters of each large column and say which were cut (`truncated_fields`).
 * A field the caller names in `include_fields` is read whole, up to LIST_FULL_BUDGET_CHARS for the page
 * (beyond, a 400 asks for a smaller page); a field it does not name is not read at all.
 */
import { type Kysely, sql } from 'kysely';
import type { Database, DatasetLogsTable, StoredLog } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { JSON_TEXT_COLUMNS } from '../json-text.js';

export const LARGE_COLUMNS = [...JSON_TEXT_COLUMNS, 'transcript'] as const;
export type LargeColumn = (typeof LARGE_COLUMNS)[number];

/** A call's usage and price: columns of logs and of dataset logs alike. */
export const USAGE_COLUMNS = [
  'prompt_tokens',
  'completion_tokens',
  'total_request_tokens',
  'cost',
  'unpriced',
  'latency',
] as const satisfies readonly (keyof StoredLog & keyof DatasetLogsTable)[];

/** Every other column of logs: short values, always read. */
const SMALL_COLUMNS = [
  'id',
  'unique_id',
  'organization_id',
  'api_key_id',
  'organization_key_name',
  'user_email',
  'is_test',
  'environment',
  'log_type',
  'log_method',
  'status_code',
  'status',
  'failed',
  'error_message',
  'error_code',
  'input_preview',
  'output_preview',
  ...USAGE_COLUMNS,
  'time_to_first_token',
  'tokens_per_second',
  'routing_time',
  'model',
  'foundation_model',
  'provider_id',
  'deployment_name',
  'customer_identifier',
  'customer_email',
  'thread_identifier',
  'custom_identifier',
  'trace_unique_id',
  'span_unique_id',
  'span_parent_id',
  'span_name',
  'span_workflow_name',
  'prompt_id',
  'temperature',
  'max_tokens',
  'stream',
  'attempts',
  'fallback_used',
  'cache_hit',
  'used_custom_credential',
  'is_example',
  'metadata',
  'embedding_dimensions',
  'embedding_count',
  'audio_duration',
  'timestamp',
  'start_time',
  'created_at',
] as const satisfies readonly Exclude<keyof StoredLog, LargeColumn>[];

/** Characters of a large column a list item holds unless the caller asks for the field. */
export const LIST_PREVIEW_CHARS = 8192;
/** Characters of whole large fields (asked for by include_fields) one page may hold. */
export const LIST_FULL_BUDGET_CHARS = 64 * 1024 * 1024;

/** The large columns each item field is presented from (prompt_messages falls back to the input). */
const SOURCES: ReadonlyMap<string, readonly LargeColumn[]> = new Map<string, readonly LargeColumn[]>([
  ['input', ['input']],
  ['output', ['output']],
  ['prompt_messages', ['prompt_messages', 'input']],
  ['completion_message', ['completion_message', 'output']],
  ['tools', ['tools']],
  ['tool_calls', ['tool_calls']],
  ['tool_choice', ['tool_choice']],
  ['transcript', ['transcript']],
]);

export type PageRow = StoredLog & { organization_name: string };

export interface FetchedRow {
  row: PageRow;
  /** Large columns holding only their first LIST_PREVIEW_CHARS characters. */
  truncated: Set<LargeColumn>;
}

/**
 * The rows of `ids` (any order). `include` null: every large column as a preview. Otherwise only the
 * large columns the named fields need, whole; the others are null.
 */
export async function fetchPageRows(
  db: Kysely<Database>,
  ids: readonly number[],
  include: readonly string[] | null,
): Promise<FetchedRow[]> {
  if (ids.length === 0) return [];
  const whole = new Set<LargeColumn>();
  for (const field of include ?? []) for (const column of SOURCES.get(field) ?? []) whole.add(column);
  const read = include === null ? LARGE_COLUMNS : LARGE_COLUMNS.filter((c) => whole.has(c));
  const rows = (await db
    .selectFrom('logs')
    .innerJoin('organizations', 'organizations.id', 'logs.organization_id')
    .select(SMALL_COLUMNS.map((c) => `logs.${c}` as const))
    .select('organizations.name as organization_name')
    .select(read.map((c) => sql<string | null>`substr(${sql.ref(`logs.${c}`)}, 1, ${LIST_PREVIEW_CHARS + 1})`.as(c)))
    .where('logs.id', 'in', ids)
    .execute()) as unknown as PageRow[];

  const fetched = rows.map((row) => {
    const truncated = new Set<LargeColumn>();
    for (const column of LARGE_COLUMNS) {
      const value = (row as Record<string, unknown>)[column];
      if (typeof value === 'string' && value.length > LIST_PREVIEW_CHARS) {
        truncated.add(column);
        (row as Record<string, unknown>)[column] = value.slice(0, LIST_PREVIEW_CHARS);
      } else if (value === undefined) {
        (row as Record<string, unknown>)[column] = null;
      }
    }
    return { row, truncated };
  });
  if (whole.size > 0) await readWhole(db, fetched, whole);
  return fetched;
}

/** Replaces the previews of the columns in `whole` by their full values, within the page's budget. */
async function readWhole(db: Kysely<Database>, fetched: FetchedRow[], whole: ReadonlySet<LargeColumn>) {
  let held = 0;
  for (const { row, truncated } of fetched) {
    const columns = [...truncated].filter((c) => whole.has(c));
    if (columns.length === 0) continue;
    // One row at a time: the page never holds more than the budget and one log.
    const full = await db.selectFrom('logs').select(columns).where('id', '=', row.id).executeTakeFirst();
    for (const column of columns) {
      const value = (full?.[column] ?? null) as string | null;
      held += value?.length ?? 0;
      if (held > LIST_FULL_BUDGET_CHARS) {
        throw new AppError(
          400,
          'page_too_large',
          `The fields asked for by include_fields hold more than ${LIST_FULL_BUDGET_CHARS} characters on this ` +
            'page; ask for a smaller page_size, or GET the logs one by one.',
          'include_fields',
        );
      }
      (row as Record<string, unknown>)[column] = value;
      truncated.delete(column);
    }
  }
}
