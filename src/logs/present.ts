/** A stored log as the API shows it (docs/api.md "The log record"). */
import type { z } from 'zod';
import type { StoredLog } from '../db/schema.js';
import { LOG_ITEM_FIELDS, type LogItem, type ScoreOnLog } from './log-item.js';
import { parseJsonText } from './json-text.js';
import type { LargeColumn } from './list/rows.js';
import { isMessageType } from './log-types.js';
import { logPreviews } from './preview.js';

export type ScoreView = z.output<typeof ScoreOnLog>;
export { LOG_ITEM_FIELDS, type LogItem };

/** An export's column of one metadata key: `metadata__<key>`. */
export const METADATA_COLUMN = 'metadata__';

/**
 * `include_fields`: unique_id and exactly the named fields (null where a log type has no such field).
 * Named fields are read whole (src/logs/list/rows.ts), so nothing is truncated to report. An export may
 * also name `metadata__<key>`: that key's value (null when the log has none).
 */
export function pickFields(item: LogItem, fields: readonly string[]): Record<string, unknown> {
  const picked: Record<string, unknown> = { unique_id: item.unique_id };
  const all = item as Record<string, unknown>;
  for (const f of fields) {
    picked[f] = f.startsWith(METADATA_COLUMN)
      ? (item.metadata[f.slice(METADATA_COLUMN.length)] ?? null)
      : (all[f] ?? null);
  }
  return picked;
}

/** A stored time as ISO 8601; null for one no date can hold, so that no stored value can break a read. */
function iso(ms: number | null): string | null {
  if (ms === null) return null;
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

function messagesFromInput(input: unknown): unknown[] {
  if (Array.isArray(input)) return input;
  if (input && typeof input === 'object' && Array.isArray((input as { messages?: unknown }).messages)) {
    return (input as { messages: unknown[] }).messages;
  }
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  return [];
}

function messageFromOutput(output: unknown): unknown {
  if (output && typeof output === 'object' && !Array.isArray(output)) {
    const o = output as { role?: unknown; choices?: { message?: unknown }[] };
    if (typeof o.role === 'string') return output;
    if (Array.isArray(o.choices) && o.choices[0]?.message) return o.choices[0].message;
  }
  if (typeof output === 'string') return { role: 'assistant', content: output };
  return null;
}

/** JSON text parsed, or null (and the field named in `marks`) when only a preview of it was read. */
function parsedUnlessCut(
  text: string | null,
  column: LargeColumn,
  cut: ReadonlySet<LargeColumn>,
  marks: string[],
): unknown {
  if (text === null) return null;
  if (cut.has(column)) {
    marks.push(column);
    return null;
  }
  return parseJsonText(text);
}

/**
 * A message field: its own column parsed when stored, else made from the column it comes from (input,
 * output); null, and the field named in `marks`, when only a preview of the column it reads was read.
 */
function messageField(
  row: StoredLog,
  field: 'prompt_messages' | 'completion_message',
  source: 'input' | 'output',
  make: (parsed: unknown) => unknown,
  cut: ReadonlySet<LargeColumn>,
  marks: string[],
): unknown {
  const stored = row[field];
  if (stored !== null) return parsedUnlessCut(stored, field, cut, marks);
  const from = row[source];
  if (from === null) return null;
  if (cut.has(source)) {
    marks.push(field);
    return null;
  }
  return make(parseJsonText(from));
}

const NOTHING_CUT: ReadonlySet<LargeColumn> = new Set();

/**
 * The stored previews; for a log stored before they were (both null), read from the columns at hand,
 * each only when it was read whole: a cut body is not JSON.
 */
function previewsOf(
  row: StoredLog,
  cut: ReadonlySet<LargeColumn>,
): { input_preview: string | null; output_preview: string | null } {
  if (row.input_preview !== null || row.output_preview !== null) {
    return { input_preview: row.input_preview, output_preview: row.output_preview };
  }
  const whole = (column: LargeColumn) => (cut.has(column) ? null : row[column]);
  const previews = logPreviews({
    logType: row.log_type,
    input: whole('input'),
    output: whole('output'),
    promptMessages: whole('prompt_messages'),
    completionMessage: whole('completion_message'),
    toolCalls: whole('tool_calls'),
    transcript: whole('transcript'),
    embeddingCount: row.embedding_count,
    embeddingDimensions: row.embedding_dimensions,
    audioDuration: row.audio_duration,
    errorMessage: row.error_message,
  });
  return { input_preview: previews.input, output_preview: previews.output };
}

/**
 * The item of a stored log. `truncated` (list pages, src/logs/list/rows.ts) names the large columns
 * read as a preview: text fields then hold that preview, JSON fields hold null, and the item's
 * `truncated_fields` names them all.
 */
export function presentLog(
  row: StoredLog & { organization_name: string },
  scores: Record<string, ScoreView>,
  truncated?: ReadonlySet<LargeColumn>,
): LogItem {
  const cut = truncated ?? NOTHING_CUT;
  const marks: string[] = [];
  if (cut.has('input')) marks.push('input');
  if (cut.has('output')) marks.push('output');
  // Built field by field (the order of the answer); its shape is LogItem's, checked by the test suite.
  const item: Record<string, unknown> = {
    unique_id: row.unique_id,
    organization_key__name: row.organization_key_name,
    organization: row.organization_name,
    user: row.user_email,
    is_example: row.is_example === 1,
    is_test: row.is_test === 1,
    environment: row.environment,
    status: row.status,
    log_type: row.log_type,
    log_method: row.log_method,
    input: row.input,
    output: row.output,
    ...previewsOf(row, cut),
  };
  if (isMessageType(row.log_type)) {
    item.prompt_messages = messageField(row, 'prompt_messages', 'input', messagesFromInput, cut, marks);
    item.completion_message = messageField(row, 'completion_message', 'output', messageFromOutput, cut, marks);
  }
  Object.assign(item, {
    prompt_tokens: row.prompt_tokens,
    completion_tokens: row.completion_tokens,
    total_request_tokens: row.total_request_tokens,
    cost: row.unpriced ? null : row.cost,
    latency: row.latency,
    time_to_first_token: row.time_to_first_token,
    tokens_per_second: row.tokens_per_second,
    routing_time: row.routing_time,
    model: row.model,
    foundation_model: row.foundation_model,
    provider_id: row.provider_id,
    deployment_name: row.deployment_name,
    tool_choice: parsedUnlessCut(row.tool_choice, 'tool_choice', cut, marks),
    tools: parsedUnlessCut(row.tools, 'tools', cut, marks),
    tool_calls: parsedUnlessCut(row.tool_calls, 'tool_calls', cut, marks),
    timestamp: iso(row.timestamp),
    start_time: iso(row.start_time),
    metadata: JSON.parse(row.metadata),
    customer_identifier: row.customer_identifier,
    customer_email: row.customer_email,
    thread_identifier: row.thread_identifier,
    custom_identifier: row.custom_identifier,
    trace_unique_id: row.trace_unique_id,
    span_unique_id: row.span_unique_id,
    span_parent_id: row.span_parent_id,
    span_name: row.span_name,
    span_workflow_name: row.span_workflow_name,
    prompt_id: row.prompt_id,
    temperature: row.temperature,
    max_tokens: row.max_tokens,
    scores,
    failed: row.failed === 1,
    error_message: row.error_message,
    error_code: row.error_code,
    stream: row.stream === 1,
    attempts: row.attempts === null ? [] : (JSON.parse(row.attempts) as unknown[]),
    fallback_used: row.fallback_used === 1,
    cache_hit: row.cache_hit === 1,
    status_code: row.status_code,
    used_custom_credential: row.used_custom_credential === 1,
  });
  if (row.log_type === 'embedding') {
    item.embedding_dimensions = row.embedding_dimensions;
    item.embedding_count = row.embedding_count;
  }
  if (row.log_type === 'transcription') {
    item.audio_duration = row.audio_duration;
    item.transcript = row.transcript;
    if (cut.has('transcript')) marks.push('transcript');
  }
  if (truncated) item.truncated_fields = marks;
  return item as LogItem;
}
