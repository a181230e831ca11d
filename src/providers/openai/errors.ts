/** OpenAI's error answers, `{"error": {"message", "type", "param", "code"}}`: the message as the log keeps it. */
import type { UpstreamError } from '../protocol.js';

/** The status as it came; the error's message, or a short description of the status for a body without one. */
export function upstreamErrorOf(status: number, body: Buffer): UpstreamError {
  return { status, message: errorMessage(body) ?? `The provider answered ${status}.` };
}

/** `error.message` of a JSON error body, or null. */
export function errorMessage(body: Buffer): string | null {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { error?: { message?: unknown } } | null;
    if (typeof parsed?.error?.message === 'string') return parsed.error.message;
  } catch {
    // not JSON
  }
  return null;
}
