/**
 * A model-call span's prompt and completion as chat messages ({role, content, tool_calls?}), read from
 * the current GenAI conventions first (gen_ai.input.messages / gen_ai.output.messages, then the older
 * message events), then OpenLLMetry's indexed gen_ai.prompt.N / gen_ai.completion.N, then OpenInference's
 * llm.input_messages.N / llm.output_messages.N, then plain input and output values.
 */
import type { OtlpSpan } from './otlp-decode.js';
import { indexed, jsonOf, textOf } from './span-attributes.js';

export interface ChatMessage {
  role: string;
  content: unknown;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
}

interface ToolCall {
  id?: string;
  type: 'function';
  function: { name: string; arguments: string };
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const asText = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v ?? null));
/** An id or name as text; an object (whose `toString` may be data, and throw) is no id. */
const idText = (v: unknown): string =>
  typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? String(v) : '';

export interface SpanMessages {
  prompt: ChatMessage[] | null;
  completion: ChatMessage | null;
  /** Input or output that is not messages (an embedding's text, a value an instrumentation recorded). */
  input?: unknown;
  output?: unknown;
}

export function messagesOf(span: OtlpSpan): SpanMessages {
  return (
    genAiMessages(span) ??
    genAiEvents(span) ??
    indexedMessages(span, 'gen_ai.prompt', 'gen_ai.completion', openLlmetryMessage) ??
    indexedMessages(span, 'llm.prompts', 'llm.completions', openLlmetryMessage) ??
    indexedMessages(span, 'llm.input_messages', 'llm.output_messages', openInferenceMessage) ??
    plainValues(span)
  );
}

/** GenAI's current form: JSON lists of {role, parts: [{type, content | id, name, arguments | response}]}. */
function genAiMessages(span: OtlpSpan): SpanMessages | null {
  const input = jsonOf(span.attributes, 'gen_ai.input.messages');
  const output = jsonOf(span.attributes, 'gen_ai.output.messages');
  if (input === undefined && output === undefined) return null;
  const prompt = Array.isArray(input) ? input.filter(isObj).flatMap(fromParts) : null;
  const system = jsonOf(span.attributes, 'gen_ai.system_instructions');
  if (prompt && system !== undefined) {
    const parts = Array.isArray(system) ? system : [{ type: 'text', content: system }];
    prompt.unshift(...fromParts({ role: 'system', parts }));
  }
  const outputs = Array.isArray(output) ? output.filter(isObj).flatMap(fromParts) : [];
  return { prompt, completion: outputs[0] ?? null };
}

/** One GenAI message; a tool's responses become `tool` messages, as chat APIs write them. */
function fromParts(message: Obj): ChatMessage[] {
  const role = typeof message.role === 'string' ? message.role : 'user';
  const parts = Array.isArray(message.parts) ? message.parts.filter(isObj) : [];
  const texts: string[] = [];
  const calls: ToolCall[] = [];
  const out: ChatMessage[] = [];
  for (const part of parts) {
    if (part.type === 'tool_call') {
      calls.push(toolCall(part.id, part.name, part.arguments));
    } else if (part.type === 'tool_call_response') {
      out.push({ role: 'tool', content: asText(part.response ?? part.result), tool_call_id: idText(part.id) });
    } else if (part.content !== undefined && part.type !== 'reasoning') {
      texts.push(asText(part.content));
    }
  }
  if (texts.length > 0 || calls.length > 0 || out.length === 0) {
    const m: ChatMessage = { role, content: texts.length > 0 ? texts.join('\n') : null };
    if (calls.length > 0) m.tool_calls = calls;
    out.unshift(m);
  }
  return out;
}

function toolCall(id: unknown, name: unknown, args: unknown): ToolCall {
  const call: ToolCall = { type: 'function', function: { name: idText(name), arguments: asText(args ?? {}) } };
  if (idText(id) !== '') call.id = idText(id);
  return call;
}

/** GenAI's earlier form: one span event per message (gen_ai.user.message, …, gen_ai.choice). */
function genAiEvents(span: OtlpSpan): SpanMessages | null {
  const prompt: ChatMessage[] = [];
  let completion: ChatMessage | null = null;
  for (const event of span.events) {
    const m = /^gen_ai\.(system|user|assistant|tool)\.message$/.exec(event.name);
    if (m) {
      const content = jsonOf(event.attributes, 'content', 'gen_ai.event.content');
      prompt.push({ role: textOf(event.attributes, 'role') ?? m[1]!, content: content ?? null });
    } else if (event.name === 'gen_ai.choice' && !completion) {
      const message = jsonOf(event.attributes, 'message', 'gen_ai.event.content');
      completion = isObj(message)
        ? { role: idText(message.role) || 'assistant', content: message.content ?? null }
        : { role: 'assistant', content: message ?? null };
    }
  }
  return prompt.length > 0 || completion ? { prompt: prompt.length > 0 ? prompt : null, completion } : null;
}

function indexedMessages(
  span: OtlpSpan,
  inputPrefix: string,
  outputPrefix: string,
  read: (fields: Map<string, unknown>) => ChatMessage,
): SpanMessages | null {
  const inputs = indexed(span.attributes, inputPrefix);
  const outputs = indexed(span.attributes, outputPrefix);
  if (inputs.length === 0 && outputs.length === 0) return null;
  return { prompt: inputs.length > 0 ? inputs.map(read) : null, completion: outputs[0] ? read(outputs[0]) : null };
}

/** OpenLLMetry: role, content, tool_calls.M.{id, name, arguments}. */
function openLlmetryMessage(fields: Map<string, unknown>): ChatMessage {
  const message: ChatMessage = {
    role: idText(fields.get('role')) || 'user',
    content: contentOf(fields.get('content')),
  };
  const calls = new Map<string, Map<string, unknown>>();
  for (const [key, value] of fields) {
    const m = /^tool_calls\.(\d+)\.(.+)$/.exec(key);
    if (!m) continue;
    const call = calls.get(m[1]!) ?? new Map<string, unknown>();
    call.set(m[2]!, value);
    calls.set(m[1]!, call);
  }
  if (calls.size > 0) {
    message.tool_calls = [...calls.entries()]
      .sort((x, y) => Number(x[0]) - Number(y[0]))
      .map(([, c]) => toolCall(c.get('id'), c.get('name'), c.get('arguments')));
  }
  return message;
}

/** OpenInference: message.role, message.content (or message.contents.M.message_content.text), tool calls. */
function openInferenceMessage(fields: Map<string, unknown>): ChatMessage {
  const parts: string[] = [];
  const calls = new Map<string, Map<string, unknown>>();
  for (const [key, value] of fields) {
    const part = /^message\.contents\.(\d+)\.message_content\.text$/.exec(key);
    if (part && typeof value === 'string') parts.push(value);
    const call = /^message\.tool_calls\.(\d+)\.tool_call\.(.+)$/.exec(key);
    if (call) {
      const c = calls.get(call[1]!) ?? new Map<string, unknown>();
      c.set(call[2]!, value);
      calls.set(call[1]!, c);
    }
  }
  const content = fields.get('message.content') ?? (parts.length > 0 ? parts.join('\n') : null);
  const message: ChatMessage = { role: idText(fields.get('message.role')) || 'user', content: contentOf(content) };
  if (calls.size > 0) {
    message.tool_calls = [...calls.entries()]
      .sort((x, y) => Number(x[0]) - Number(y[0]))
      .map(([, c]) => toolCall(c.get('id'), c.get('function.name'), c.get('function.arguments')));
  }
  const toolCallId = fields.get('message.tool_call_id');
  if (typeof toolCallId === 'string') message.tool_call_id = toolCallId;
  return message;
}

/** Text content as it is; a JSON list of content parts as the list. */
function contentOf(v: unknown): unknown {
  if (typeof v !== 'string' || !v.startsWith('[')) return v ?? null;
  try {
    const parsed: unknown = JSON.parse(v);
    return Array.isArray(parsed) ? parsed : v;
  } catch {
    return v;
  }
}

/** input.value/output.value (OpenInference), traceloop.entity.input/output (OpenLLMetry workflows). */
function plainValues(span: OtlpSpan): SpanMessages {
  return {
    prompt: null,
    completion: null,
    input: jsonOf(span.attributes, 'input.value', 'traceloop.entity.input', 'gen_ai.tool.call.arguments'),
    output: jsonOf(span.attributes, 'output.value', 'traceloop.entity.output', 'gen_ai.tool.call.result'),
  };
}
