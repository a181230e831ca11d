/**
 * A dataset log as the API shows it (docs/api.md "Dataset logs"): the response schema of every route
 * that answers one, and the item presentDatasetLog builds from a row.
 */
import { z } from 'zod';
import type { Selectable } from 'kysely';
import type { DatasetLogsTable } from '../db/schema.js';
import { parseJsonText } from '../logs/json-text.js';
import { completionText, promptText } from './texts.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

export const AnnotationCompletedBy = z
  .object({ first_name: z.string(), last_name: z.string(), email: z.string() })
  .describe('Who completed the annotation; empty strings when nobody (or a key without an owner) did');

export const DatasetScore = z.object({
  evaluator_id: z.string(),
  evaluator_name: z.string(),
  evaluator_slug: z.string(),
  score_value: z.number().describe('Booleans as 0.0 or 1.0'),
});

export const DatasetLogItem = z.object({
  id: z.string().describe("The dataset log's id"),
  organization_id: z.string(),
  dataset_id: z.string(),
  source_log_unique_id: z.string().nullable().describe('The log it was copied from; null for a log added by hand'),
  environment: z.string(),
  log_type: z.string(),
  timestamp: z.string().describe('ISO 8601 UTC'),
  start_time: z.string().describe('ISO 8601 UTC'),
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_request_tokens: z.number().int(),
  cost: z.number().nullable().describe('USD; null when no price is known for the model'),
  model: z.string(),
  latency: z.number().describe('Seconds'),
  status_code: z.number().int(),
  status: z.string(),
  error_message: z.string().nullable().describe("The log's error message; null when none (or added by hand)"),
  error_code: z.string().nullable().describe("The log's error code; null when none (or added by hand)"),
  prompt: z.string().describe("The input's text: a chat's last user message, an embedding's inputs by line"),
  completion: z.string().describe("The output's text ('' when none); a transcription's transcript"),
  input: z.string().nullable().describe('JSON text'),
  output: z.string().nullable().describe('JSON text'),
  metadata: z.record(z.string(), z.unknown()),
  annotation_status: z.string().describe('Open-ended; "pending" until set, "completed" when done'),
  annotation_completed_by: AnnotationCompletedBy,
  scores: z.array(DatasetScore),
  truncated_fields: z
    .array(z.string())
    .optional()
    .describe(
      'Lists only: the fields cut — input and output holding only a preview (their first 8192 characters), ' +
        'and prompt and completion, read from them, empty; GET the log for the whole',
    ),
});
export type DatasetLogItem = z.output<typeof DatasetLogItem>;

const NOBODY = { first_name: '', last_name: '', email: '' };

/** The large columns of a dataset log, read as previews in lists. */
export const DATASET_LARGE_COLUMNS = ['input', 'output'] as const;
export type DatasetLargeColumn = (typeof DATASET_LARGE_COLUMNS)[number];

/** The text field read from each large column: unknown when only a preview of the column was read. */
const DERIVED = { input: 'prompt', output: 'completion' } as const;

/**
 * The API's item of a row. In lists, `truncated` names the large columns that hold only a preview: they
 * are shown as read, the texts derived from them are empty, and `truncated_fields` names both (empty when
 * nothing was cut, as in request-log lists); the item route reads the log whole and has no such field.
 */
export function presentDatasetLog(
  row: Selectable<DatasetLogsTable>,
  scores: z.output<typeof DatasetScore>[],
  truncated?: ReadonlySet<DatasetLargeColumn>,
): DatasetLogItem {
  const item = presentWhole(row, scores, truncated ?? new Set());
  if (truncated) {
    item.truncated_fields = DATASET_LARGE_COLUMNS.filter((c) => truncated.has(c)).flatMap((c) => [c, DERIVED[c]]);
  }
  return item;
}

function presentWhole(
  row: Selectable<DatasetLogsTable>,
  scores: z.output<typeof DatasetScore>[],
  truncated: ReadonlySet<DatasetLargeColumn>,
): DatasetLogItem {
  return {
    id: String(row.id),
    organization_id: row.organization_id,
    dataset_id: row.dataset_id,
    source_log_unique_id: row.source_log_unique_id,
    environment: row.environment,
    log_type: row.log_type,
    timestamp: iso(row.timestamp)!,
    start_time: iso(row.start_time)!,
    prompt_tokens: Number(row.prompt_tokens),
    completion_tokens: Number(row.completion_tokens),
    total_request_tokens: Number(row.total_request_tokens),
    cost: Number(row.unpriced) ? null : Number(row.cost),
    model: row.model,
    latency: Number(row.latency),
    status_code: Number(row.status_code),
    status: row.status,
    error_message: row.error_message ?? null,
    error_code: row.error_code ?? null,
    prompt: truncated.has('input') ? '' : promptText(row.input),
    completion: truncated.has('output') ? '' : completionText(row.output),
    input: row.input,
    output: row.output,
    metadata: (parseJsonText(row.metadata) as Record<string, unknown>) ?? {},
    annotation_status: row.annotation_status,
    annotation_completed_by: row.annotation_completed_by
      ? { ...NOBODY, ...(JSON.parse(row.annotation_completed_by) as object) }
      : NOBODY,
    scores,
  };
}
