/**
 * What gatelog says when it ends a stream the provider did not end (stream-pipeline.ts): the errors of a
 * provider fallen silent, of a stream that lasted too long or sent an event that could not be read, and
 * the event the client gets in the stream when it breaks off.
 */
import { AppError } from '../../errors.js';
import type { StreamFaultCode } from './stream-contract.js';

/** The error event a client gets when the provider's stream breaks off: no [DONE] follows it. */
export function errorEvent(error: AppError, code: StreamFaultCode): string {
  return `data: ${JSON.stringify({ error: { message: error.message, type: 'upstream_error', code } })}\n\n`;
}

/** The provider sent nothing for idleTimeoutMs. */
export function idleTimeout(idleTimeoutMs: number): AppError {
  return new AppError(
    504,
    'upstream_timeout',
    `The provider sent nothing for ${idleTimeoutMs} ms (GATELOG_STREAM_IDLE_TIMEOUT_MS).`,
  );
}

/** The stream lasted maxDurationMs, whatever arrived. */
export function tooLong(maxDurationMs: number): AppError {
  return new AppError(
    504,
    'upstream_timeout',
    `The stream lasted ${maxDurationMs} ms, the longest a stream may (GATELOG_STREAM_MAX_DURATION_MS).`,
  );
}

/** What a route's reader threw at an event: its own AppError, else an event that could not be read. */
export function unreadableEvent(err: unknown): AppError {
  return err instanceof AppError
    ? err
    : new AppError(502, 'upstream_invalid_response', 'The provider sent an event that could not be read.');
}
