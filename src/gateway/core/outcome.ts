/**
 * How a call ended, as its log keeps it (status_code, error_message): decided here, once, for every
 * route — refused by gatelog, failed on the way, refused by the provider, or a stream that ended short.
 */
import { AppError } from '../../errors.js';
import type { UpstreamError } from '../../providers/protocol.js';
import type { ProxiedCall, StreamOutcome, StreamReader } from './contract.js';

export type CallEnding =
  /** An error of gatelog's (its AppError's status and message), or one it did not expect (a 500). */
  | { kind: 'error'; error: unknown }
  /** The provider's error answer, as its protocol reads it. */
  | { kind: 'provider_error'; error: UpstreamError }
  /** A stream: however it ended (stream-pipeline.ts), and what its reader found wrong in it. */
  | { kind: 'stream'; outcome: StreamOutcome; reader: StreamReader };

export function endCall(call: ProxiedCall, ending: CallEnding): void {
  const { log } = call;
  switch (ending.kind) {
    case 'error':
      log.status_code = ending.error instanceof AppError ? ending.error.status : 500;
      log.error_message = ending.error instanceof AppError ? ending.error.message : 'internal error';
      return;
    case 'provider_error':
      log.status_code = ending.error.status;
      log.error_message = ending.error.message;
      return;
    case 'stream': {
      const { outcome, reader } = ending;
      if (outcome.kind === 'client_gone') {
        log.status_code = 499;
        log.error_message = 'client disconnected';
      } else if (outcome.kind === 'failed') {
        log.status_code = outcome.error.status;
        log.error_message = outcome.error.message;
      } else {
        const fault = reader.fault();
        if (fault !== null) {
          log.status_code = 502;
          log.error_message = fault;
        }
      }
    }
  }
}
