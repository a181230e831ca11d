/**
 * What a route's stream reader says went wrong in a stream the provider ended (StreamReader.fault): an
 * error event of the provider's, with its own code when it names one, or a stream that ended before its
 * last event.
 */
import { providerErrorCode } from '../../providers/error-code.js';
import type { StreamFault } from './stream-contract.js';

/** An error event the provider sent in its stream: its message, and its code (else upstream_error). */
export function inBandFault(message: string, code: unknown): StreamFault {
  return { message, code: providerErrorCode(code) ?? 'upstream_error' };
}

/** The provider ended its stream before its last event: it broke off, as a lost connection does. */
export function endedEarly(message: string): StreamFault {
  return { message, code: 'stream_interrupted' };
}
