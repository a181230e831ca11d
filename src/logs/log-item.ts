/**
 * The log item as the API shows it (docs/api.md "The log record"): the response schema of every route
 * that answers logs, and the type presentLog builds.
 */
import { z } from 'zod';

const text = z.string();
const optionalText = z.string().nullable();

/** The thread, custom, trace and span identifiers and the prompt's: a stored log's and a logged one's. */
export function identifierFields<T extends z.ZodType>(text: T) {
  return {
    thread_identifier: text,
    custom_identifier: text,
    trace_unique_id: text,
    span_unique_id: text,
    span_parent_id: text,
    span_name: text,
    span_workflow_name: text,
    prompt_id: text,
  };
}
const seconds = (what: string) => z.number().describe(`${what}, in seconds`);
const Message = z.looseObject({ role: z.string().optional(), content: z.unknown().optional() });

export const ScoreOnLog = z.object({
  evaluator_name: z.string(),
  evaluator_slug: z.string(),
  score_value: z.number().describe('Booleans as 0.0 or 1.0'),
});

export const LogItem = z.object({
  unique_id: z.string().describe("The log's name (a UUID); proxied answers carry it in X-Gatelog-Log-Id"),
  organization_key__name: text.describe('The name of the API key that wrote the log'),
  organization: text.describe("The organization's name"),
  user: text.describe("The key owner's email, or ''"),
  is_example: z.boolean(),
  is_test: z.boolean().describe('Written with a test key'),
  environment: text.describe('"prod" for production keys, "test" for test keys, unless given'),
  status: z.enum(['success', 'error']).describe('success when status_code < 400'),
  log_type: text.describe('chat, completion, text, response, embedding, transcription, speech, or a span type'),
  log_method: z
    .enum(['inference', 'logging_api'])
    .describe('inference: a proxied call; logging_api: a log sent to gatelog'),
  input: optionalText.describe("The call's input as JSON text (a preview in lists when named in truncated_fields)"),
  output: optionalText.describe("The call's output as JSON text"),
  input_preview: optionalText.describe(
    'The input at a glance, one line of at most 300 characters: the last user message, a prompt, the texts embedded, the audio file',
  ),
  output_preview: optionalText.describe(
    'The output at a glance, one line of at most 300 characters: the answer\'s text or `tool: name(args)`, the transcript, "N inputs × D dims", an error\'s message',
  ),
  prompt_messages: z.array(z.unknown()).nullable().optional().describe('Chat-like log types only: the input messages'),
  completion_message: Message.nullable().optional().describe('Chat-like log types only: the output message'),
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_request_tokens: z.number().int().describe('prompt_tokens + completion_tokens'),
  cost: z.number().nullable().describe('USD; null when no price is known for the model (see metadata.pricing)'),
  latency: seconds('From dispatch to the end of the answer'),
  time_to_first_token: seconds('Time to the first token').nullable(),
  tokens_per_second: z.number(),
  routing_time: seconds("From the call's arrival at gatelog to its dispatch upstream"),
  model: text,
  foundation_model: text,
  provider_id: text,
  deployment_name: optionalText,
  tool_choice: z.unknown().nullable(),
  tools: z.unknown().nullable(),
  tool_calls: z.unknown().nullable(),
  timestamp: optionalText.describe('When the call ended: ISO 8601 UTC'),
  start_time: optionalText.describe('When the call began: ISO 8601 UTC'),
  metadata: z.record(z.string(), z.unknown()),
  customer_identifier: text.describe("Your user's tag, or ''"),
  customer_email: text,
  ...identifierFields(optionalText),
  temperature: z.number().nullable(),
  max_tokens: z.number().int().nullable(),
  scores: z.record(z.string(), ScoreOnLog).describe('Evaluator id → its score of this log'),
  failed: z.boolean(),
  error_message: optionalText,
  error_code: optionalText.describe(
    "Why the call failed, as a code: gatelog's refusal (model_not_allowed, rate_limited…), the provider's own code, upstream_error, client_disconnected, stream_interrupted, stream_timeout; null when it succeeded",
  ),
  stream: z.boolean(),
  attempts: z
    .array(
      z.object({
        provider: z.string(),
        model: z.string(),
        status_code: z.number().int(),
        error: z.string(),
        latency: seconds('The try'),
      }),
    )
    .describe('Proxied calls: the tries before the one that answered (retries, fallbacks), in order'),
  fallback_used: z.boolean().describe('A fallback model answered the call'),
  cache_hit: z.boolean().describe('The answer came from the response cache'),
  status_code: z.number().int(),
  used_custom_credential: z.boolean().describe("The call used the caller's customer_credentials"),
  embedding_dimensions: z.number().int().nullable().optional().describe('Embedding logs only'),
  embedding_count: z.number().int().nullable().optional().describe('Embedding logs only: the number of inputs'),
  audio_duration: seconds('Transcription logs only: the audio').nullable().optional(),
  transcript: optionalText.optional().describe('Transcription logs only'),
  truncated_fields: z
    .array(z.string())
    .optional()
    .describe('Lists only: the large fields that hold a preview (text fields) or null (JSON fields)'),
});
export type LogItem = z.output<typeof LogItem>;

/** Every field a log item can hold; `include_fields` names must come from here. */
export const LOG_ITEM_FIELDS = Object.keys(LogItem.shape).filter((f) => f !== 'truncated_fields');
