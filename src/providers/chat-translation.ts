/**
 * A chat completion served by a provider whose API is not OpenAI's (Claude, through Anthropic's
 * Messages API): the chat route sends the call in the provider's API and tells its answer, its stream
 * and its errors back as OpenAI's. A protocol that translates offers one (protocol.ts `chat`); the chat
 * route asks for it rather than for a kind of provider.
 */
import type { TokenUsage } from './usage.js';

type Json = Record<string, unknown>;

/** The chat stream's last event (OpenAI's). */
export const DONE_EVENT = 'data: [DONE]\n\n';

/** One chat event to send, made of the provider's. */
export interface TranslatedEvent {
  /** As written to the client: `data: {…}\n\n`, or `data: [DONE]\n\n`. */
  text: string;
  /** The `chat.completion.chunk` it holds, for ChatAssembler; null for [DONE] and an error event. */
  chunk: Json | null;
  /** The usage-only chunk gatelog makes for its own log when the client did not ask for it: not sent. */
  hidden: boolean;
}

/** The provider's event stream, one event at a time, told as chat chunks. */
export interface ChatStreamTranslator {
  /** One of the provider's events → the chat events to send. Throws an AppError (502) for one it cannot read. */
  event(message: { event?: string; data: string }): TranslatedEvent[];
  /** The provider's last event arrived: the answer is whole (and its usage known). */
  readonly completed: boolean;
  /** The error the stream ended with (an in-band error event; its code, the provider's), or null. */
  readonly error: { message: string; code?: unknown } | null;
  /** The counts as the latest event that carried them left them, as the usage chunk tells them. */
  readonly usage: TokenUsage;
}

export interface ChatTranslation {
  /** Where a chat call goes, in the provider's API (placed under the base URL by the protocol's `path`). */
  readonly path: string;
  /** The chat call's body (OpenAI's shape) as the provider's request for `model`. Throws an AppError (400) for what cannot be translated. */
  request(body: Json, model: string): Json;
  /**
   * The provider's whole answer as a `chat.completion`, with the counts it is priced by: its usage's,
   * and what OpenAI's usage cannot say (writes to a one-hour cache).
   */
  answer(body: Json): { completion: Json; usage: TokenUsage };
  /** A reader of the provider's event stream; `includeUsage`: the client asked for the usage event. */
  stream(options: { includeUsage: boolean }): ChatStreamTranslator;
  /** The provider's error answer (its body's text) in OpenAI's error shape, to be sent as JSON. */
  error(body: string, status: number): unknown;
}
