/**
 * OTLP/JSON trace exports shaped as three families of instrumentation send them — the GenAI semantic
 * conventions (current message attributes and the earlier message events), OpenLLMetry (indexed
 * gen_ai.prompt.N attributes, traceloop.* span kinds) and OpenInference (llm.input_messages.N,
 * openinference.span.kind) — with fresh ids on each call, and what gatelog's log of each span must say.
 */
import crypto from 'node:crypto';

type Value = string | number | boolean;
type Attribute = { key: string; value: Record<string, unknown> };

export interface OtlpPayload {
  style: string;
  traceId: string;
  body: { resourceSpans: { resource: unknown; scopeSpans: { scope: unknown; spans: unknown[] }[] }[] };
  /** Per span name, fields of its log and their values. */
  expect: Record<string, Record<string, unknown>>;
}

const hex = (bytes: number) => crypto.randomBytes(bytes).toString('hex');

function attributes(values: Record<string, Value>): Attribute[] {
  return Object.entries(values).map(([key, v]) => ({
    key,
    value:
      typeof v === 'string'
        ? { stringValue: v }
        : typeof v === 'boolean'
          ? { boolValue: v }
          : Number.isInteger(v)
            ? { intValue: String(v) }
            : { doubleValue: v },
  }));
}

interface SpanSpec {
  name: string;
  parent?: string;
  attrs: Record<string, Value>;
  events?: { name: string; attrs: Record<string, Value> }[];
  error?: string;
  ms: number;
}

function build(style: string, scope: string, specs: SpanSpec[], expect: OtlpPayload['expect']): OtlpPayload {
  const traceId = hex(16);
  const ids = new Map(specs.map((s) => [s.name, hex(8)]));
  let at = BigInt(Date.now() - 60_000) * 1_000_000n;
  const spans = specs.map((s) => {
    const start = at;
    const end = start + BigInt(s.ms) * 1_000_000n;
    at += 1_000_000n;
    return {
      traceId,
      spanId: ids.get(s.name),
      ...(s.parent ? { parentSpanId: ids.get(s.parent) } : {}),
      name: s.name,
      kind: 1,
      startTimeUnixNano: String(start),
      endTimeUnixNano: String(end),
      attributes: attributes(s.attrs),
      events: (s.events ?? []).map((e) => ({
        name: e.name,
        timeUnixNano: String(start),
        attributes: attributes(e.attrs),
      })),
      status: s.error ? { code: 2, message: s.error } : { code: 0 },
    };
  });
  const body = {
    resourceSpans: [
      {
        resource: { attributes: attributes({ 'service.name': `${style}-app` }) },
        scopeSpans: [{ scope: { name: scope, version: '1.0.0' }, spans }],
      },
    ],
  };
  for (const [name, fields] of Object.entries(expect)) {
    fields.span_unique_id = ids.get(name);
    fields.trace_unique_id = traceId;
  }
  return { style, traceId, body, expect };
}

export function genAiPayload(): OtlpPayload {
  return build(
    'genai',
    'openai-agents',
    [
      {
        name: 'invoke_agent Support',
        attrs: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'Support' },
        ms: 900,
      },
      {
        name: 'chat gpt-4o-mini',
        parent: 'invoke_agent Support',
        ms: 700,
        attrs: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': 'gpt-4o-mini',
          'gen_ai.usage.input_tokens': 40,
          'gen_ai.usage.output_tokens': 12,
          'gen_ai.input.messages': JSON.stringify([
            { role: 'user', parts: [{ type: 'text', content: 'Cancel order 7' }] },
          ]),
          'gen_ai.output.messages': JSON.stringify([
            { role: 'assistant', parts: [{ type: 'text', content: 'Done.' }], finish_reason: 'stop' },
          ]),
        },
      },
      {
        name: 'chat legacy',
        parent: 'invoke_agent Support',
        ms: 300,
        attrs: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.system': 'anthropic',
          'gen_ai.request.model': 'claude-3-5-haiku-latest',
        },
        events: [
          { name: 'gen_ai.system.message', attrs: { content: 'Answer in French.' } },
          { name: 'gen_ai.user.message', attrs: { content: 'Hello' } },
          { name: 'gen_ai.choice', attrs: { message: JSON.stringify({ role: 'assistant', content: 'Bonjour' }) } },
        ],
      },
      {
        name: 'embeddings text-embedding-3-small',
        parent: 'invoke_agent Support',
        ms: 50,
        attrs: {
          'gen_ai.operation.name': 'embeddings',
          'gen_ai.request.model': 'text-embedding-3-small',
          'gen_ai.usage.input_tokens': 8,
          'gen_ai.embeddings.dimension.count': 1536,
        },
      },
    ],
    {
      'invoke_agent Support': { log_type: 'agent', span_parent_id: null, latency: 0.9 },
      'chat gpt-4o-mini': {
        log_type: 'chat',
        model: 'gpt-4o-mini',
        provider_id: 'openai',
        prompt_tokens: 40,
        completion_tokens: 12,
        prompt_messages: [{ role: 'user', content: 'Cancel order 7' }],
        completion_message: { role: 'assistant', content: 'Done.' },
        span_workflow_name: 'invoke_agent Support',
        latency: 0.7,
        metadata: { service_name: 'genai-app', otel_scope: 'openai-agents' },
      },
      'chat legacy': {
        log_type: 'chat',
        provider_id: 'anthropic',
        prompt_messages: [
          { role: 'system', content: 'Answer in French.' },
          { role: 'user', content: 'Hello' },
        ],
        completion_message: { role: 'assistant', content: 'Bonjour' },
      },
      'embeddings text-embedding-3-small': {
        log_type: 'embedding',
        model: 'text-embedding-3-small',
        prompt_tokens: 8,
        embedding_dimensions: 1536,
      },
    },
  );
}

export function openLlmetryPayload(): OtlpPayload {
  return build(
    'openllmetry',
    'opentelemetry.instrumentation.openai.v1',
    [
      {
        name: 'joke_workflow.workflow',
        ms: 1200,
        attrs: {
          'traceloop.span.kind': 'workflow',
          'traceloop.workflow.name': 'joke_workflow',
          'traceloop.entity.name': 'joke_workflow',
        },
      },
      {
        name: 'fetch_context.task',
        parent: 'joke_workflow.workflow',
        ms: 100,
        attrs: {
          'traceloop.span.kind': 'task',
          'traceloop.workflow.name': 'joke_workflow',
          'traceloop.entity.input': JSON.stringify({ args: ['cats'], kwargs: {} }),
          'traceloop.entity.output': JSON.stringify('cats are funny'),
        },
      },
      {
        name: 'openai.chat',
        parent: 'joke_workflow.workflow',
        ms: 800,
        attrs: {
          'llm.request.type': 'chat',
          'gen_ai.system': 'OpenAI',
          'gen_ai.request.model': 'gpt-3.5-turbo',
          'gen_ai.response.model': 'gpt-3.5-turbo-0125',
          'llm.usage.total_tokens': 35,
          'gen_ai.usage.prompt_tokens': 15,
          'gen_ai.usage.completion_tokens': 20,
          'gen_ai.request.temperature': 0.7,
          'gen_ai.prompt.0.role': 'user',
          'gen_ai.prompt.0.content': 'Tell me a joke about cats, then the weather in Paris',
          'gen_ai.completion.0.role': 'assistant',
          'gen_ai.completion.0.content': 'Why did the cat sit on the computer?',
          'gen_ai.completion.0.finish_reason': 'tool_calls',
          'gen_ai.completion.0.tool_calls.0.id': 'call_w',
          'gen_ai.completion.0.tool_calls.0.name': 'get_weather',
          'gen_ai.completion.0.tool_calls.0.arguments': '{"city":"Paris"}',
          'traceloop.workflow.name': 'joke_workflow',
        },
      },
    ],
    {
      'joke_workflow.workflow': { log_type: 'workflow', span_workflow_name: 'joke_workflow' },
      'fetch_context.task': {
        log_type: 'task',
        input: '{"args":["cats"],"kwargs":{}}',
        output: '"cats are funny"',
        span_workflow_name: 'joke_workflow',
      },
      'openai.chat': {
        log_type: 'chat',
        model: 'gpt-3.5-turbo',
        provider_id: 'openai',
        prompt_tokens: 15,
        completion_tokens: 20,
        temperature: 0.7,
        prompt_messages: [{ role: 'user', content: 'Tell me a joke about cats, then the weather in Paris' }],
        tool_calls: [
          { id: 'call_w', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        ],
        span_workflow_name: 'joke_workflow',
      },
    },
  );
}

export function openInferencePayload(): OtlpPayload {
  return build(
    'openinference',
    'openinference.instrumentation.llama_index',
    [
      {
        name: 'query',
        ms: 1500,
        attrs: {
          'openinference.span.kind': 'CHAIN',
          'input.value': 'What is the refund window?',
          'output.value': '30 days',
        },
      },
      {
        name: 'retrieve',
        parent: 'query',
        ms: 200,
        attrs: { 'openinference.span.kind': 'RETRIEVER', 'input.value': 'refund window' },
      },
      {
        name: 'embedding',
        parent: 'retrieve',
        ms: 40,
        attrs: {
          'openinference.span.kind': 'EMBEDDING',
          'embedding.model_name': 'text-embedding-3-small',
          'llm.token_count.prompt': 4,
        },
      },
      {
        name: 'ChatCompletion',
        parent: 'query',
        ms: 900,
        error: 'rate limited',
        attrs: {
          'openinference.span.kind': 'LLM',
          'llm.model_name': 'gpt-4o',
          'llm.provider': 'openai',
          'llm.token_count.prompt': 30,
          'llm.token_count.completion': 5,
          'llm.input_messages.0.message.role': 'system',
          'llm.input_messages.0.message.content': 'Use the context.',
          'llm.input_messages.1.message.role': 'user',
          'llm.input_messages.1.message.content': 'What is the refund window?',
          'llm.output_messages.0.message.role': 'assistant',
          'llm.output_messages.0.message.content': '30 days',
          'http.response.status_code': 429,
        },
      },
    ],
    {
      // Text stored as the logging API stores a text input: JSON text.
      query: { log_type: 'task', input: '"What is the refund window?"', output: '"30 days"', span_parent_id: null },
      retrieve: { log_type: 'task', input: '"refund window"', span_workflow_name: 'query' },
      embedding: { log_type: 'embedding', model: 'text-embedding-3-small', prompt_tokens: 4 },
      ChatCompletion: {
        log_type: 'chat',
        model: 'gpt-4o',
        provider_id: 'openai',
        prompt_tokens: 30,
        completion_tokens: 5,
        prompt_messages: [
          { role: 'system', content: 'Use the context.' },
          { role: 'user', content: 'What is the refund window?' },
        ],
        completion_message: { role: 'assistant', content: '30 days' },
        status_code: 429,
        error_message: 'rate limited',
      },
    },
  );
}
