/** Anthropic's error answers, `{"type": "error", "error": {"type", "message"}}`: the message as the log keeps it. */
import type { UpstreamError } from '../protocol.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The status as it came; the error's message, or a short description of the status for a body without one. */
export function upstreamErrorOf(status: number, body: Buffer): UpstreamError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    parsed = null; // not JSON
  }
  const message = isObject(parsed) && isObject(parsed.error) ? parsed.error.message : undefined;
  return { status, message: typeof message === 'string' ? message : `The provider answered ${status}.` };
}
