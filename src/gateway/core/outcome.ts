/**
 * How a call ended, as its log keeps it (status_code, error_message, error_code): decided here, once, for
 * every route — refused by gatelog, failed on the way, refused by the provider, or a stream that ended
 * short.
 */
import { AppError } from '../../errors.js';
import type { UpstreamError } from '../../providers/protocol.js';
import type { ProxiedCall } from './call.js';
import type { StreamOutcome, StreamReader } from './stream-contract.js';

export type CallEnding =
  /** An error of gatelog's (its AppError's status and message), or one it did not expect (a 500). */
  | { kind: 'error'; error: unknown }
  /** The provider's error answer, as its protocol reads it. */
  | { kind: 'provider_error'; error: UpstreamError }
  /** A stream: however it ended (stream-pipeline.ts), and what its reader found wrong in it. */
  | { kind: 'stream'; outcome: StreamOutcome; reader: StreamReader };

/** The statuses of gatelog's refusals (docs/api.md "Metrics": gatelog_refused_total). */
const REFUSALS = new Set([401, 402, 403, 429]);

export function endCall(call: ProxiedCall, ending: CallEnding): void {
  const { log } = call;
  switch (ending.kind) {
    case 'error': {
      const { error } = ending;
      if (error instanceof AppError) {
        log.status_code = error.status;
        log.error_message = error.message;
        log.error_code = error.code;
        call.refused = REFUSALS.has(error.status);
      } else {
        log.status_code = 500;
        log.error_message = 'internal error';
        // As the client's envelope says it (http/plumbing/error-handler.ts).
        log.error_code = 'server_error';
      }
      return;
    }
    case 'provider_error':
      log.status_code = ending.error.status;
      log.error_message = ending.error.message;
      log.error_code = ending.error.code ?? 'upstream_error';
      return;
    case 'stream': {
      const { outcome, reader } = ending;
      if (outcome.kind === 'client_gone') {
        log.status_code = 499;
        log.error_message = 'client disconnected';
        log.error_code = 'client_disconnected';
      } else if (outcome.kind === 'failed') {
        log.status_code = outcome.error.status;
        log.error_message = outcome.error.message;
        log.error_code = outcome.code;
      } else {
        const fault = reader.fault();
        if (fault !== null) {
          log.status_code = 502;
          log.error_message = fault.message;
          log.error_code = fault.code;
        }
      }
    }
  }
}
