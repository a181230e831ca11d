/**
 * OpenAI's error answers, `{"error": {"message", "type", "param", "code"}}`: the message and the code
 * as the log keeps them.
 */
import { providerErrorCode } from '../error-code.js';
import type { UpstreamError } from '../protocol.js';

/** The status as it came; the error's message (or a short description of the status) and its `code`. */
export function upstreamErrorOf(status: number, body: Buffer): UpstreamError {
  const error = errorObject(body);
  return {
    status,
    message: messageOf(error) ?? `The provider answered ${status}.`,
    code: providerErrorCode(error?.code),
  };
}

/** The `error` object of a JSON error body (read once for its message and its code), or null. */
export function errorObject(body: Buffer): Record<string, unknown> | null {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { error?: unknown } | null;
    const error = parsed?.error;
    if (error !== null && typeof error === 'object' && !Array.isArray(error)) return error as Record<string, unknown>;
  } catch {
    // not JSON
  }
  return null;
}

const messageOf = (error: Record<string, unknown> | null) =>
  typeof error?.message === 'string' ? error.message : null;
