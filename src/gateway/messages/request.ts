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
  /** The caller's query string as it came (`?beta=true`, as Claude Code sends it), or ''. */
  query: string;
}

/** What of the caller's request, besides its body, goes upstream with it. */
export interface Forwarded {
  headers: Record<string, string>;
  query: string;
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
 * The query string of a request's URL, `?` included, byte for byte ('' for none): Anthropic reads
 * `?beta=true` (Claude Code's beta calls carry it), and a query gatelog does not know may mean
 * something to a newer Anthropic.
 */
export function forwardedQuery(url: string): string {
  const at = url.indexOf('?');
  return at < 0 || at === url.length - 1 ? '' : url.slice(at);
}

/** What of the caller's request goes upstream besides its body: its Anthropic headers and its query. */
export function forwardedOf(request: {
  url: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
}): Forwarded {
  return { headers: forwardedHeaders(request.headers), query: forwardedQuery(request.url) };
}

/**
 * `fields`: the body with the platform parameters already taken out (`params`). gatelog's `metadata`
 * platform parameter shares its name with Anthropic's `metadata: {user_id}`: the log keeps the whole
 * object, and its `user_id` (Anthropic's only metadata field) also goes upstream as Anthropic's.
 */
export function parseMessagesRequest(
  fields: Json,
  params: PlatformParams,
  { headers, query }: Forwarded,
): MessagesRequest {
  const { messages, stream } = fields;
  const model = modelOf(fields);
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
    query,
  };
}

/** The body's `model`, which chooses the provider: a non-empty string. */
export function modelOf(fields: Json): string {
  const { model } = fields;
  if (typeof model !== 'string' || model.trim() === '') {
    throw invalid('model', 'model is required: the name of a Claude model, such as claude-sonnet-4-5.');
  }
  return model;
}
