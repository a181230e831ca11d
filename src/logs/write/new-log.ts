/**
 * Builds the row of a new log from what is known about a call: the derived fields of docs/api.md "The log record"
 * (status, failed, total tokens, tokens per second, cost, environment, key and owner facts) are
 * computed here, once, for the logging API and the proxy alike.
 */
import { withoutNul } from '../../util/nul.js';
import type { KeyIdentity } from '../../auth/authenticator.js';
import type { LogsTable } from '../../db/schema.js';
import type { PriceTable } from '../pricing/price-table.js';
import { ALL_COPY_FIELDS, type CopyField, storedCopies } from './log-copies.js';
import { isSpanType } from '../log-types.js';
import { logPreviews } from '../preview.js';
import { uuidv7 } from '../uuid7.js';

export type LogRow = Omit<LogsTable, 'id'>;

/** A log waiting to be written: its row and its metadata (also written to the side table). */
export interface NewLog {
  row: LogRow;
  metadata: Record<string, unknown>;
}

/** Everything a caller may say about a log; absent fields get the defaults of docs/api.md "Logging API". */
/** One try of a proxied call that did not answer it (docs/api.md "Retries and fallbacks"). */
export interface Attempt {
  provider: string;
  model: string;
  /** The provider's status, or gatelog's for a try that got none (502 unreachable, 504 timeout). */
  status_code: number;
  error: string;
  /** Seconds. */
  latency: number;
}

export interface LogFields {
  /** Chosen by the caller when it must name the log before it is built (a proxied call's header). */
  unique_id?: string;
  log_type?: string;
  log_method: 'inference' | 'logging_api';
  input?: unknown;
  output?: unknown;
  prompt_messages?: unknown[] | null;
  completion_message?: unknown | null;
  prompt_tokens?: number;
  completion_tokens?: number;
  cost?: number;
  latency?: number;
  time_to_first_token?: number | null;
  tokens_per_second?: number;
  routing_time?: number;
  model?: string;
  foundation_model?: string;
  provider_id?: string;
  deployment_name?: string | null;
  customer_identifier?: string;
  customer_email?: string;
  thread_identifier?: string | null;
  custom_identifier?: string | null;
  trace_unique_id?: string | null;
  span_unique_id?: string | null;
  span_parent_id?: string | null;
  span_name?: string | null;
  span_workflow_name?: string | null;
  prompt_id?: string | null;
  temperature?: number | null;
  max_tokens?: number | null;
  stream?: boolean;
  is_example?: boolean;
  used_custom_credential?: boolean;
  tool_choice?: unknown;
  tools?: unknown;
  tool_calls?: unknown;
  metadata?: Record<string, unknown> | null;
  environment?: string;
  status_code?: number;
  error_message?: string | null;
  /** Why the call failed, as a code: gatelog's (a refusal's, a stream's end) or the provider's. */
  error_code?: string | null;
  /** Epoch milliseconds. */
  timestamp?: number;
  start_time?: number;
  embedding_dimensions?: number | null;
  embedding_count?: number | null;
  audio_duration?: number | null;
  transcript?: string | null;
  /** A proxied call's tries before the one that answered. */
  attempts?: Attempt[];
  fallback_used?: boolean;
  cache_hit?: boolean;
  /** When input/output must not be kept (disable_log): metrics only. */
  omitContent?: boolean;
}

const bool = (b: boolean | undefined) => (b ? 1 : 0);

/**
 * `copyBudget` (GATELOG_LOG_MAX_BYTES) bounds what the log keeps of the call's prompt and of its answer
 * (log-copies.ts).
 */
export function buildNewLog(fields: LogFields, auth: KeyIdentity, prices: PriceTable, copyBudget: number): NewLog {
  const now = Date.now();
  const logType = fields.log_type ?? 'chat';
  const statusCode = fields.status_code ?? 200;
  const failed = statusCode >= 400;
  const promptTokens = fields.prompt_tokens ?? 0;
  const completionTokens = fields.completion_tokens ?? 0;
  const totalTokens = promptTokens + completionTokens;
  const latency = fields.latency ?? 0;
  const timestamp = fields.timestamp ?? now;
  const model = fields.model ?? '';
  const uniqueId = fields.unique_id ?? uuidv7(now);
  // A cost the caller gives is kept whatever the status; one gatelog computes is 0 for a failed call, and
  // unknown (null) for a model without a price: stored as 0 and marked, never a wrong number.
  const cost =
    fields.cost ??
    (failed
      ? 0
      : prices.cost({
          model,
          providerId: fields.provider_id,
          promptTokens,
          completionTokens,
          audioSeconds: fields.audio_duration ?? null,
          at: timestamp,
        }));
  const unpriced = cost === null;

  const explicitPrompt = fields.prompt_messages ?? null;
  const explicitCompletion = fields.completion_message ?? null;
  const keep = !fields.omitContent;
  const copies = storedCopies(
    {
      input: keep ? (fields.input !== undefined ? fields.input : explicitPrompt) : null,
      output: keep ? (fields.output !== undefined ? fields.output : explicitCompletion) : null,
      prompt_messages: keep ? explicitPrompt : null,
      completion_message: keep ? explicitCompletion : null,
      tools: fields.tools,
      tool_choice: fields.tool_choice,
      tool_calls: fields.tool_calls,
      transcript: keep ? fields.transcript : null,
    },
    copyBudget,
    fields.log_method === 'inference' ? ALL_COPY_FIELDS : derivedCopies(fields),
  );

  // Read from the whole values, here, once: a list reads only the first characters of each body.
  const previews = logPreviews({
    logType,
    input: keep ? (fields.input !== undefined ? fields.input : explicitPrompt) : null,
    output: keep ? (fields.output !== undefined ? fields.output : explicitCompletion) : null,
    promptMessages: keep ? explicitPrompt : null,
    completionMessage: keep ? explicitCompletion : null,
    toolCalls: keep ? fields.tool_calls : null,
    transcript: keep ? fields.transcript : null,
    embeddingCount: fields.embedding_count,
    embeddingDimensions: fields.embedding_dimensions,
    audioDuration: fields.audio_duration,
    errorMessage: fields.error_message,
  });

  const metadata = unpriced ? { ...fields.metadata, pricing: unpricedNote(model) } : (fields.metadata ?? {});
  const row: LogRow = {
    unique_id: uniqueId,
    organization_id: auth.organizationId,
    api_key_id: auth.keyId,
    organization_key_name: auth.keyName,
    user_email: auth.owner.email,
    is_test: bool(auth.isTest),
    environment: fields.environment ?? (auth.isTest ? 'test' : 'prod'),
    log_type: logType,
    log_method: fields.log_method,
    status_code: statusCode,
    status: failed ? 'error' : 'success',
    failed: bool(failed),
    error_message: fields.error_message ?? null,
    error_code: fields.error_code ?? null,
    input: copies.input,
    output: copies.output,
    input_preview: previews.input,
    output_preview: previews.output,
    prompt_messages: copies.prompt_messages,
    completion_message: copies.completion_message,
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_request_tokens: totalTokens,
    cost: cost ?? 0,
    unpriced: bool(unpriced),
    attempts: fields.attempts && fields.attempts.length > 0 ? JSON.stringify(fields.attempts) : null,
    fallback_used: bool(fields.fallback_used),
    cache_hit: bool(fields.cache_hit),
    latency,
    time_to_first_token: fields.time_to_first_token ?? null,
    tokens_per_second: fields.tokens_per_second ?? (latency > 0 ? totalTokens / latency : 0),
    routing_time: fields.routing_time ?? 0,
    model,
    foundation_model: fields.foundation_model ?? model,
    provider_id: fields.provider_id ?? '',
    deployment_name: fields.deployment_name ?? null,
    customer_identifier: fields.customer_identifier ?? '',
    customer_email: fields.customer_email ?? '',
    thread_identifier: fields.thread_identifier ?? null,
    custom_identifier: fields.custom_identifier ?? null,
    trace_unique_id: fields.trace_unique_id ?? null,
    span_unique_id: fields.span_unique_id ?? (isSpanType(logType) ? uniqueId : null),
    span_parent_id: fields.span_parent_id ?? null,
    span_name: fields.span_name ?? null,
    span_workflow_name: fields.span_workflow_name ?? null,
    prompt_id: fields.prompt_id ?? null,
    temperature: fields.temperature ?? null,
    max_tokens: fields.max_tokens ?? null,
    stream: bool(fields.stream),
    used_custom_credential: bool(fields.used_custom_credential),
    is_example: bool(fields.is_example),
    tool_choice: copies.tool_choice,
    tools: copies.tools,
    tool_calls: copies.tool_calls,
    metadata: JSON.stringify(metadata),
    embedding_dimensions: fields.embedding_dimensions ?? null,
    embedding_count: fields.embedding_count ?? null,
    audio_duration: fields.audio_duration ?? null,
    transcript: copies.transcript,
    timestamp,
    start_time: fields.start_time ?? Math.round(timestamp - latency * 1000),
    created_at: now,
  };
  replaceNul(row);
  return { row, metadata };
}

/** A logged call's fields that gatelog derives from others (input from prompt_messages, output from completion_message). */
function derivedCopies(fields: LogFields): ReadonlySet<CopyField> {
  const derived = new Set<CopyField>();
  if (fields.input === undefined) derived.add('input');
  if (fields.output === undefined) derived.add('output');
  return derived;
}

/** The log's metadata.pricing when its model has no price. */
export function unpricedNote(model: string): string {
  return (
    `No price is known for model '${model}': its cost is unknown. Add it to GATELOG_PRICING_FILE ` +
    `to price its calls.`
  );
}

/**
 * The plain-text columns a provider's answer fills (a transcript, its error message), and the previews,
 * read from JSON where a NUL is an escape (`\u0000`) but plain text in them.
 */
const PROVIDER_TEXT_COLUMNS = ['transcript', 'error_message', 'input_preview', 'output_preview'] as const;

/**
 * The last guard before storage: PostgreSQL text cannot hold NUL, and a log it refuses is lost. What a
 * caller sends with NUL where it cannot be stored is refused at the API edge (and a model is logged only
 * when storable), but a provider's answer is not the caller's to fix, and its call was served: such a
 * character is stored as U+FFFD. Only those columns are looked at: this runs for every log.
 */
function replaceNul(row: LogRow): void {
  for (const column of PROVIDER_TEXT_COLUMNS) {
    const value = row[column];
    if (value !== null) row[column] = withoutNul(value);
  }
}
