/**
 * A Responses API call (docs/api.md "Responses API"): its light validation — only what gatelog relies on,
 * each refusal naming its field, so that whatever the provider accepts still passes — and its prompt
 * read as chat messages for the log. Everything else in the body, unknown fields included, goes
 * upstream unchanged.
 */
import { AppError } from '../../errors.js';

/** The roles of a message item (an input item without a `type`, or of type `message`). */
export const INPUT_ROLES = ['user', 'assistant', 'system', 'developer'] as const;
const ROLES = new Set<string>(INPUT_ROLES);

type Json = Record<string, unknown>;

export interface ResponsesRequest {
  model: string;
  stream: boolean;
  /** The body that goes upstream: the caller's, platform parameters taken out. */
  upstreamBody: Json;
}

const invalid = (param: string, message: string) => new AppError(400, 'invalid_value', message, param);

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** `fields`: the body with the platform parameters already taken out. */
export function parseResponsesRequest(fields: Json): ResponsesRequest {
  const { model, input, instructions, stream, tools } = fields;
  if (typeof model !== 'string' || model.trim() === '') {
    throw invalid('model', 'model is required: the name of a model, such as gpt-4o-mini.');
  }
  if (input !== undefined && input !== null) {
    if (typeof input !== 'string' && !Array.isArray(input)) {
      throw invalid('input', 'input must be a string or a list of input items.');
    }
    if (Array.isArray(input)) input.forEach(checkItem);
  }
  if (instructions !== undefined && instructions !== null && typeof instructions !== 'string') {
    throw invalid('instructions', 'instructions must be a string.');
  }
  if (stream !== undefined && stream !== null && typeof stream !== 'boolean') {
    throw invalid('stream', 'stream must be a boolean.');
  }
  if (tools !== undefined && tools !== null && !Array.isArray(tools)) {
    throw invalid('tools', 'tools must be a list of tools.');
  }
  return { model, stream: stream === true, upstreamBody: fields };
}

function checkItem(item: unknown, index: number): void {
  const at = `input.${index}`;
  if (!isObject(item)) throw invalid(at, `${at} must be an object: an input item.`);
  if (item.type !== undefined && typeof item.type !== 'string') {
    throw invalid(`${at}.type`, `${at}.type must be a string.`);
  }
  if (item.type === undefined || item.type === 'message') {
    if (typeof item.role !== 'string' || !ROLES.has(item.role)) {
      throw invalid(`${at}.role`, `${at}.role must be one of ${INPUT_ROLES.join(', ')}.`);
    }
    const { content } = item;
    if (typeof content !== 'string' && !Array.isArray(content)) {
      throw invalid(`${at}.content`, `${at}.content must be a string or a list of content parts.`);
    }
  }
}

/**
 * The call's prompt as chat messages, for the log's prompt_messages: `instructions` as a system
 * message, a string `input` as a user message, and each input item as the chat message it amounts to
 * (a message with its text parts as chat's, a function call as an assistant tool call, its output as
 * a tool message). An item chat has no message for (reasoning, a reference to a stored item, a hosted
 * tool's call) is kept as it came. Read from a call that may be refused: nothing is assumed of it.
 */
export function promptMessages(instructions: unknown, input: unknown): unknown[] {
  const messages: unknown[] = [];
  if (typeof instructions === 'string' && instructions !== '') messages.push({ role: 'system', content: instructions });
  if (typeof input === 'string') messages.push({ role: 'user', content: input });
  else if (Array.isArray(input)) for (const item of input) messages.push(chatMessage(item));
  return messages;
}

function chatMessage(item: unknown): unknown {
  if (!isObject(item)) return item;
  if (item.type === 'function_call') {
    const call = { id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } };
    return { role: 'assistant', content: null, tool_calls: [call] };
  }
  if (item.type === 'function_call_output') {
    return { role: 'tool', tool_call_id: item.call_id, content: chatContent(item.output) };
  }
  if ((item.type === undefined || item.type === 'message') && typeof item.role === 'string') {
    return { role: item.role, content: chatContent(item.content) };
  }
  return item;
}

/** Content parts as chat's: input and output text as `text` parts, an image URL as an `image_url` part. */
function chatContent(content: unknown): unknown {
  if (!Array.isArray(content)) return content;
  return content.map((part) => {
    if (!isObject(part)) return part;
    if ((part.type === 'input_text' || part.type === 'output_text') && typeof part.text === 'string') {
      return { type: 'text', text: part.text };
    }
    if (part.type === 'input_image' && typeof part.image_url === 'string') {
      const detail = typeof part.detail === 'string' ? { detail: part.detail } : {};
      return { type: 'image_url', image_url: { url: part.image_url, ...detail } };
    }
    return part;
  });
}

/**
 * A response's answer as one chat message, for the log's completion_message: its output text (every
 * message's text parts, joined), its refusal, and its function calls as tool calls.
 */
export function completionMessage(response: Json): { message: Json; toolCalls: Json[] } {
  const output = Array.isArray(response.output) ? response.output.filter(isObject) : [];
  const texts: string[] = [];
  const refusals: string[] = [];
  const toolCalls: Json[] = [];
  for (const item of output) {
    if (item.type === 'message' && Array.isArray(item.content)) {
      for (const part of item.content) {
        if (!isObject(part)) continue;
        if (part.type === 'output_text' && typeof part.text === 'string') texts.push(part.text);
        if (part.type === 'refusal' && typeof part.refusal === 'string') refusals.push(part.refusal);
      }
    } else if (item.type === 'function_call') {
      toolCalls.push({ id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } });
    }
  }
  const message: Json = { role: 'assistant', content: texts.length > 0 ? texts.join('') : null };
  if (refusals.length > 0) message.refusal = refusals.join('');
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return { message, toolCalls };
}
