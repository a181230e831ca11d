/**
 * Reading a call to Anthropic's Messages API (docs/api.md "Anthropic Messages API"): light, as for chat
 * completions — only what gatelog relies on is checked (the model that chooses the provider, the
 * messages it logs, whether the answer streams), each refusal naming its field. Everything else in the
 * body goes upstream as the caller sent it, and Anthropic answers for it.
 */
import { AppError } from '../../errors.js';
import type { PlatformParams } from '../core/platform-params.js';

type Json = Record<string, unknown>;

/** The caller's request headers that go upstream with the call (the rest, its key included, never do). */
export const FORWARDED_HEADERS = ['anthropic-version', 'anthropic-beta'] as const;

export interface MessagesRequest {
  model: string;
  messages: Json[];
  /** The system prompt as sent (a string or a list of text blocks), or undefined. */
  system: unknown;
  stream: boolean;
  /** The body that goes upstream: the caller's, platform parameters taken out. */
  upstreamBody: Json;
  /** The caller's `anthropic-version` and `anthropic-beta`, sent after the key's default version. */
  headers: Record<string, string>;
}

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const invalid = (param: string, message: string) => new AppError(400, 'invalid_value', message, param);

/** The forwarded headers the caller sent: a header sent twice arrives joined, as Anthropic reads a list of betas. */
export function forwardedHeaders(headers: Readonly<Record<string, string | string[] | undefined>>) {
  const forwarded: Record<string, string> = {};
  for (const name of FORWARDED_HEADERS) {
    const value = headers[name];
    const text = Array.isArray(value) ? value.join(',') : value;
    if (text !== undefined && text.trim() !== '') forwarded[name] = text;
  }
  return forwarded;
}

/**
 * `fields`: the body with the platform parameters already taken out (`params`). gatelog's `metadata`
 * platform parameter shares its name with Anthropic's `metadata: {user_id}`: the log keeps the whole
 * object, and its `user_id` (Anthropic's only metadata field) also goes upstream as Anthropic's.
 */
export function parseMessagesRequest(
  fields: Json,
  params: PlatformParams,
  headers: Record<string, string>,
): MessagesRequest {
  const { model, messages, stream } = fields;
  if (typeof model !== 'string' || model.trim() === '') {
    throw invalid('model', 'model is required: the name of a Claude model, such as claude-sonnet-4-5.');
  }
  if (!Array.isArray(messages) || messages.length === 0) {
    throw invalid('messages', 'messages must be a non-empty list of messages.');
  }
  messages.forEach((message, index) => {
    if (!isObject(message)) throw invalid(`messages.${index}`, `messages.${index} must be an object.`);
  });
  if (stream !== undefined && stream !== null && typeof stream !== 'boolean') {
    throw invalid('stream', 'stream must be a boolean.');
  }
  const upstreamBody = Object.hasOwn(params.metadata, 'user_id')
    ? { ...fields, metadata: { user_id: params.metadata.user_id } }
    : fields;
  return {
    model,
    messages: messages as Json[],
    system: fields.system,
    stream: stream === true,
    upstreamBody,
    headers,
  };
}
