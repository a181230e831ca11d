/**
 * One span as a log in the logging API's shape (docs/api.md "OpenTelemetry"): a model call (GenAI
 * `gen_ai.operation.name`, OpenLLMetry `llm.request.type`, OpenInference `openinference.span.kind`) as a
 * chat, completion or embedding log; any other span as a span log (workflow, task, tool, agent, …), so
 * that a trace reads as a tree. Attributes are read from the current gen_ai.* names first, then the older
 * OpenLLMetry and OpenInference ones.
 */
import type { Attributes, OtlpSpan } from './otlp-decode.js';
import { booleanOf, numberOf, textOf } from './span-attributes.js';
import { messagesOf } from './span-messages.js';

/** Model-call types by the conventions' operation names. */
const CALL_TYPES: Record<string, 'chat' | 'completion' | 'embedding'> = {
  chat: 'chat',
  generate_content: 'chat',
  text_completion: 'completion',
  completion: 'completion',
  embeddings: 'embedding',
  embedding: 'embedding',
  llm: 'chat',
};

/** Span-log types by OpenLLMetry's traceloop.span.kind, OpenInference's span kind and GenAI operations. */
const SPAN_TYPES: Record<string, string> = {
  workflow: 'workflow',
  task: 'task',
  agent: 'agent',
  tool: 'tool',
  chain: 'task',
  retriever: 'task',
  reranker: 'task',
  evaluator: 'task',
  guardrail: 'guardrail',
  execute_tool: 'tool',
  invoke_agent: 'agent',
  create_agent: 'agent',
  handoff: 'handoff',
};

/** The bounds of the columns filters and facets index (src/logs/indexed-text.ts), in characters to be safe. */
const INDEXED_CHARS = 120;
const CUSTOMER_CHARS = 120;

export function callTypeOf(a: Attributes): 'chat' | 'completion' | 'embedding' | null {
  const op = textOf(a, 'gen_ai.operation.name', 'llm.request.type', 'openinference.span.kind')?.toLowerCase();
  return op !== undefined && Object.hasOwn(CALL_TYPES, op) ? CALL_TYPES[op]! : null;
}

function spanTypeOf(span: OtlpSpan): string {
  const kind = textOf(
    span.attributes,
    'traceloop.span.kind',
    'openinference.span.kind',
    'gen_ai.operation.name',
  )?.toLowerCase();
  if (kind !== undefined && Object.hasOwn(SPAN_TYPES, kind)) return SPAN_TYPES[kind]!;
  return span.parentSpanId === null ? 'workflow' : 'task';
}

const iso = (ms: number) => new Date(Math.round(ms)).toISOString();
const cut = (s: string | undefined, n: number) => (s === undefined ? undefined : s.slice(0, n));
const tokens = (n: number | undefined) => (n !== undefined && Number.isInteger(n) && n >= 0 ? n : undefined);

/**
 * The log of one span. `workflowOf` names a trace's workflow when its spans do not (the root span's name,
 * when the same request holds it).
 */
export function logInputOf(
  span: OtlpSpan,
  workflowOf: (traceId: string) => string | undefined,
): Record<string, unknown> {
  const a = span.attributes;
  const callType = callTypeOf(a);
  const log: Record<string, unknown> = {
    log_type: callType ?? spanTypeOf(span),
    trace_unique_id: span.traceId,
    span_unique_id: span.spanId,
    span_parent_id: span.parentSpanId,
    span_name: span.name || null,
    span_workflow_name:
      textOf(a, 'traceloop.workflow.name', 'gen_ai.workflow.name') ?? workflowOf(span.traceId) ?? null,
    start_time: iso(span.startMs),
    timestamp: iso(span.endMs),
    latency: Math.max(0, (span.endMs - span.startMs) / 1000),
  };
  const model = textOf(
    a,
    'gen_ai.request.model',
    'gen_ai.response.model',
    'llm.request.model',
    'llm.response.model',
    'llm.model_name',
    'embedding.model_name',
  );
  if (model) log.model = cut(model, INDEXED_CHARS);
  const provider = textOf(a, 'gen_ai.provider.name', 'gen_ai.system', 'llm.vendor', 'llm.provider', 'llm.system');
  if (provider) log.provider_id = cut(provider.toLowerCase(), INDEXED_CHARS);
  const prompt = tokens(
    numberOf(
      a,
      'gen_ai.usage.input_tokens',
      'gen_ai.usage.prompt_tokens',
      'llm.usage.prompt_tokens',
      'llm.token_count.prompt',
    ),
  );
  const completion = tokens(
    numberOf(
      a,
      'gen_ai.usage.output_tokens',
      'gen_ai.usage.completion_tokens',
      'llm.usage.completion_tokens',
      'llm.token_count.completion',
    ),
  );
  if (prompt !== undefined) log.prompt_tokens = prompt;
  if (completion !== undefined) log.completion_tokens = completion;
  const cost = numberOf(a, 'gen_ai.usage.cost', 'llm.usage.cost', 'llm.cost.total');
  if (cost !== undefined && cost >= 0) log.cost = cost;
  const temperature = numberOf(a, 'gen_ai.request.temperature', 'llm.request.temperature');
  if (temperature !== undefined) log.temperature = temperature;
  const maxTokens = tokens(numberOf(a, 'gen_ai.request.max_tokens', 'llm.request.max_tokens'));
  if (maxTokens !== undefined) log.max_tokens = maxTokens;
  const stream = booleanOf(a, 'gen_ai.request.stream', 'llm.is_streaming');
  if (stream !== undefined) log.stream = stream;
  const ttft = numberOf(a, 'gen_ai.response.time_to_first_chunk', 'gen_ai.server.time_to_first_token');
  if (ttft !== undefined && ttft >= 0) log.time_to_first_token = ttft;
  const customer = textOf(a, 'gatelog.customer_identifier', 'enduser.id', 'user.id');
  if (customer) log.customer_identifier = cut(customer, CUSTOMER_CHARS);
  const thread = textOf(a, 'gen_ai.conversation.id', 'session.id');
  if (thread) log.thread_identifier = thread;
  const dimensions = tokens(numberOf(a, 'gen_ai.embeddings.dimension.count'));
  if (dimensions !== undefined) log.embedding_dimensions = dimensions;

  const messages = messagesOf(span);
  if (messages.prompt) log.input = messages.prompt;
  else if (messages.input !== undefined) log.input = messages.input;
  if (messages.completion) {
    log.output = messages.completion;
    if (messages.completion.tool_calls) log.tool_calls = messages.completion.tool_calls;
  } else if (messages.output !== undefined) {
    log.output = messages.output;
  }

  if (span.statusCode === 2) {
    const http = numberOf(a, 'http.response.status_code', 'http.status_code');
    log.status_code = http !== undefined && Number.isInteger(http) && http >= 400 && http <= 599 ? http : 500;
    const exception = span.events.find((e) => e.name === 'exception');
    log.error_message =
      span.statusMessage ||
      (exception && textOf(exception.attributes, 'exception.message', 'exception.type')) ||
      textOf(a, 'error.type') ||
      'the span ended with an error';
  }
  const metadata: Record<string, string> = {};
  const service = textOf(span.resource, 'service.name');
  if (service) metadata.service_name = service.slice(0, 1024);
  if (span.scope) metadata.otel_scope = span.scope.slice(0, 1024);
  if (Object.keys(metadata).length > 0) log.metadata = metadata;
  return log;
}
