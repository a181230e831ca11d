/**
 * Anthropic's error answers, `{"type": "error", "error": {"type", "message"}}`: the message and the code
 * (its error's `type`: `overloaded_error`, `rate_limit_error`…) as the log keeps them.
 */
import { providerErrorCode } from '../error-code.js';
import { errorObject } from '../openai/errors.js';
import type { UpstreamError } from '../protocol.js';

/**
 * The status as it came; the error's message, or a short description of the status for a body without
 * one. The message sits where OpenAI's does (`error.message`), so OpenAI's reader reads the object.
 */
export function upstreamErrorOf(status: number, body: Buffer): UpstreamError {
  const error = errorObject(body);
  return {
    status,
    message: typeof error?.message === 'string' ? error.message : `The provider answered ${status}.`,
    code: providerErrorCode(error?.type),
  };
}
