/**
 * What the stream pipeline (stream-pipeline.ts) asks of a route's reader of a streamed answer, and how
 * it tells the core the stream ended. Types only; nothing here imports the core.
 */
import type { EventSourceMessage } from 'eventsource-parser';
import type { AppError } from '../../errors.js';
import type { ProxiedCall, UsageReport } from './call.js';

/** How a stream ended, as its log records it. */
export type StreamOutcome =
  /** The provider ended its answer and the client got it (or got its last event, then left). */
  (
    | { kind: 'ended' }
    /** The client went away before its answer's last byte reached it: the provider's call was aborted. */
    | { kind: 'client_gone' }
    /** The provider's connection failed, an event could not be read, or the provider fell silent. */
    | { kind: 'failed'; error: AppError; code: StreamFaultCode }
  ) & {
    /** performance.now() when the provider's side ended (its end, its failure, or its call aborted). */
    at: number;
  };

/** Adds events to the client's stream, before the event being read. */
export interface EventWriter {
  write(text: string): void;
}

/** What the stream pipeline asks of the events of a stream it passes on. */
export interface StreamEvents {
  /**
   * An event from the provider: 'forward' passes its bytes on, 'drop' holds them back. Throws an
   * AppError for an event that cannot be read (the stream then ends as failed).
   */
  event(message: EventSourceMessage, out: EventWriter): 'forward' | 'drop';
  /**
   * The event that tells the client the provider's stream broke off, in the provider's API (Anthropic's
   * `event: error`); absent: OpenAI's shape (errorEvent below).
   */
  errorEvent?(error: AppError, code: StreamFaultCode): string;
  /**
   * The provider's last event has been read ([DONE], message_stop, a terminal Responses event): the
   * answer is whole once the client has it. Absent: the stream's own end is its last byte.
   */
  complete?(): boolean;
}

/** What a route does with the events of a stream it proxies, and with the answer they made. */
export interface StreamReader extends StreamEvents {
  /** performance.now() of the answer's first output, once there was one. */
  readonly firstOutputAt: number | null;
  /**
   * What the provider's own stream said went wrong (an error event in it, its last event missing), as
   * the log's error with a 502; null: nothing. Asked once the stream ended without a failure of its own.
   */
  fault(): StreamFault | null;
  /**
   * Once, when the stream is over (the log's status already set from how it ended): fills the log's
   * content from the answer put back together, and says what it used and what the cache may keep.
   */
  end(call: ProxiedCall, generationSeconds: number | null): Promise<StreamEnd>;
}

/** What a stream's reader tells the core once the stream is over. */
export interface StreamEnd {
  usage: UsageReport;
  /** The whole answer as the cache keeps it (made only if it is kept); absent: not whole, not kept. */
  keep?: () => string;
}

/** Why gatelog ended a stream the provider did not end. */
export type StreamFaultCode = 'stream_interrupted' | 'stream_timeout';

/**
 * What went wrong in a stream the provider ended, as the log keeps it: the message, and the code — the
 * provider's own in its error event (else upstream_error), or stream_interrupted for a stream that
 * ended before its last event.
 */
export interface StreamFault {
  message: string;
  code: string;
}
