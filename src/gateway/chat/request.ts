/**
 * Validation of a chat-completions call (docs/api.md "Chat completions"): light, so that whatever the
 * provider accepts still passes — only what gatelog itself relies on is checked, each refusal naming its
 * field. Everything else in the body, unknown fields included, goes upstream unchanged.
 */
import { AppError } from '../../errors.js';

export const MESSAGE_ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function'] as const;
const ROLES = new Set<string>(MESSAGE_ROLES);
export const MAX_CHOICES = 128;

export interface ChatRequest {
  model: string;
  messages: Record<string, unknown>[];
  stream: boolean;
  /** The client asked for the usage event of a stream (stream_options.include_usage). */
  clientWantsUsage: boolean;
  /** The body that goes upstream: the caller's, platform parameters taken out, usage asked for when streaming. */
  upstreamBody: Record<string, unknown>;
}

const invalid = (param: string, message: string) => new AppError(400, 'invalid_value', message, param);

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** `fields`: the body with the platform parameters already taken out. */
export function parseChatRequest(fields: Record<string, unknown>): ChatRequest {
  const { model, messages, stream, n, stream_options: streamOptions } = fields;
  if (typeof model !== 'string' || model.trim() === '') {
    throw invalid('model', 'model is required: the name of a chat model, such as gpt-4o-mini.');
  }
  if (!Array.isArray(messages) || messages.length === 0) {
    throw invalid('messages', 'messages must be a non-empty list of messages.');
  }
  messages.forEach((message, index) => {
    if (!isObject(message)) throw invalid(`messages.${index}`, `messages.${index} must be an object.`);
    if (typeof message.role !== 'string' || !ROLES.has(message.role)) {
      throw invalid(`messages.${index}.role`, `messages.${index}.role must be one of ${MESSAGE_ROLES.join(', ')}.`);
    }
  });
  if (stream !== undefined && stream !== null && typeof stream !== 'boolean') {
    throw invalid('stream', 'stream must be a boolean.');
  }
  if (n !== undefined && n !== null && (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_CHOICES)) {
    throw invalid('n', `n must be an integer from 1 to ${MAX_CHOICES}.`);
  }
  const streaming = stream === true;
  if (streamOptions !== undefined && streamOptions !== null) {
    if (!streaming) throw invalid('stream_options', 'stream_options is only allowed with stream: true.');
    if (!isObject(streamOptions)) throw invalid('stream_options', 'stream_options must be an object.');
  }
  const clientWantsUsage = isObject(streamOptions) && streamOptions.include_usage === true;
  const upstreamBody = streaming
    ? { ...fields, stream_options: { ...(isObject(streamOptions) ? streamOptions : {}), include_usage: true } }
    : fields;
  return {
    model,
    messages: messages as Record<string, unknown>[],
    stream: streaming,
    clientWantsUsage,
    upstreamBody,
  };
}
