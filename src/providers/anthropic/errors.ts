/** Anthropic's error answers, `{"type": "error", "error": {"type", "message"}}`: the message as the log keeps it. */
import { errorMessage } from '../openai/errors.js';
import type { UpstreamError } from '../protocol.js';

/**
 * The status as it came; the error's message, or a short description of the status for a body without
 * one. The message sits where OpenAI's does (`error.message`), so OpenAI's reader reads it.
 */
export function upstreamErrorOf(status: number, body: Buffer): UpstreamError {
  return { status, message: errorMessage(body) ?? `The provider answered ${status}.` };
}
