/**
 * A provider's event stream passed on to the client (docs/api.md "Chat completions", streaming): every
 * event is parsed once as it arrives (eventsource-parser), shown to the route's reader (which builds the
 * log, and may drop an event or add one before it), and written to the client at once as the bytes it
 * came in — never merged with the next, never re-encoded. The client's pace is the provider's: when the
 * client stops reading, the provider's connection is paused, so memory does not grow with an unread
 * stream.
 *
 * One place (`decide`) settles how the stream ended — done, the client gone, the provider cut off,
 * malformed or silent — and it runs once: the route's reader completes the log, the call's one log is
 * recorded. A stream is done when its answer reached the client, not when the provider stopped: the
 * answer's last byte (the end of the provider's last event — [DONE], message_stop, a Responses terminal
 * event — or, without one, of the whole stream) written to the client's connection, the write's
 * callback run. A client that leaves after that has its whole answer (done); one that leaves before it
 * has not (client gone), whichever socket event came first (docs/api.md "How a stream ends").
 */
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import type { EventSourceMessage } from 'eventsource-parser';
import { AppError } from '../../errors.js';
import type { UpstreamStream } from '../../providers/upstream-client.js';
import type { EventWriter, StreamEvents, StreamFaultCode, StreamOutcome } from './stream-contract.js';
import { ChunkBatch } from './chunk-batch.js';
import { EventFraming } from './event-framing.js';
import { StreamClock } from './stream-clock.js';
import { errorEvent, idleTimeout, tooLong, unreadableEvent } from './stream-errors.js';

export interface PipelineOptions {
  /** The provider silent this long (not counting while the client holds it back) → stream_timeout. */
  idleTimeoutMs: number;
  /** A `: keepalive` comment after this long without an event, so that proxies keep the connection. */
  keepaliveMs: number;
  /**
   * The longest a stream may last, whatever arrives (a provider sending only comments is never idle)
   * → stream_timeout.
   */
  maxDurationMs: number;
  /** After the reader's end: the call's log is recorded. */
  onEnd: (outcome: StreamOutcome) => void | Promise<void>;
}

/** The most handed to the client's connection in one write. */
const PUSH_SLICE = 64 * 1024;

/** The write that follows the answer's last byte: its callback says the bytes before it were written. */
const EMPTY = Buffer.alloc(0);

export class StreamPipeline extends Readable {
  private readonly framing: EventFraming;
  private paused = false;
  private readonly clock: StreamClock;
  private deliveryTimer: NodeJS.Timeout | null = null;
  private outcome: StreamOutcome | null = null;
  /** The provider's side is over (ended, failed, or aborted): nothing more is read or pushed. */
  private upstreamOver = false;
  private upstreamEndedAt = 0;
  /** Bytes pushed for the client, and bytes its connection has been handed (the pipe's writes). */
  private pushedBytes = 0;
  private handedBytes = 0;
  /** The byte the client must have for its answer to be whole (see the module's comment), once known. */
  private lastByte: number | null = null;
  /** The batch being gathered holds the provider's last event. */
  private lastInBatch = false;
  private fenced = false;
  /** The answer's last byte was written to the client's connection. */
  private delivered = false;
  /** Where the stream is piped (the HTTP response): its write callbacks say what was delivered. */
  private destination: NodeJS.WritableStream | null = null;
  /** A failure found while feeding the parser (a malformed event), acted on once feeding returns. */
  private fault: AppError | null = null;
  private readonly batch = new ChunkBatch();
  private readonly out: EventWriter = { write: (text) => this.batch.write(text) };

  constructor(
    private readonly upstream: UpstreamStream,
    private readonly reader: StreamEvents,
    private readonly options: PipelineOptions,
  ) {
    super({ highWaterMark: 64 * 1024 });
    this.framing = new EventFraming({
      event: (message, raw) => this.onEvent(message, raw),
      text: (raw) => this.batch.pass(raw),
      fault: (error) => (this.fault ??= error),
      stopped: () => this.fault !== null,
    });
    this.clock = new StreamClock(options, {
      idle: () => this.fail(idleTimeout(this.options.idleTimeoutMs), 'stream_timeout'),
      // Only between events: a comment inside a half-arrived event would break it.
      keepalive: () => {
        if (this.framing.betweenEvents) this.pushOut(': keepalive\n\n');
      },
      tooLong: () => this.fail(tooLong(this.options.maxDurationMs), 'stream_timeout'),
    });
    upstream.attach({
      data: (chunk) => this.onData(chunk),
      end: () => this.providerEnded(),
      error: (error) => this.fail(error, 'stream_interrupted'),
    });
  }

  /**
   * The client wants more: the provider is read again if it was held back. Node calls this once after
   * each push() that left room, and again only after the next push: resuming here may deliver a chunk
   * at once (undici reads what it holds), and that chunk may push nothing (half an event), which is
   * why the provider is held back only by a push that found the buffer full (`pushOut`) — never by a
   * measure of the buffer, which would hold it back with no push outstanding and no _read to come.
   */
  override _read(): void {
    if (this.paused && !this.upstreamOver) {
      this.paused = false;
      if (!this.upstreamOver) this.clock.arm();
      this.upstream.resume();
    }
  }

  /**
   * Fastify pipes the stream into the response: every chunk handed to it is counted, and once the
   * answer's last byte has been, an empty write follows it — a connection calls its writes back in
   * order, so its callback says every byte before it was written. The response's 'finish' says the
   * same of the whole stream; its 'close' before that is the client gone.
   */
  override pipe<T extends NodeJS.WritableStream>(destination: T, options?: { end?: boolean }): T {
    const piped = super.pipe(destination, options);
    if (this.destination === null) {
      this.destination = destination;
      // After the pipe's own listener: the chunk has been written to the response when this runs.
      this.on('data', (chunk: Buffer) => {
        this.handedBytes += chunk.length;
        this.fenceLastByte();
      });
      destination.once('finish', () => this.onDelivered());
      destination.once('close', () => this.clientGone());
    }
    return piped;
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // Destroyed before the client read it all: the client went away (Fastify destroys the body it was
    // sending). Read to its end, it is destroyed as any stream is; the response's events say the rest.
    if (!(this.readableEnded && this.destination !== null)) this.clientGone();
    callback(error);
  }

  private onData(chunk: Buffer): void {
    if (this.upstreamOver) return;
    if (!this.upstreamOver) this.clock.arm();
    this.batch.begin();
    this.framing.write(chunk);
    if (this.fault !== null) {
      this.fail(this.fault, 'stream_interrupted');
      return;
    }
    this.batch.end(chunk, this.framing.betweenEvents);
    this.flush(chunk);
  }

  private onEvent(message: EventSourceMessage, raw: string): void {
    if (this.fault !== null || this.upstreamOver) return;
    try {
      if (this.reader.event(message, this.out) === 'forward') this.batch.pass(raw);
      else this.batch.drop();
      if (this.lastByte === null && this.reader.complete?.() === true) this.lastInBatch = true;
    } catch (err) {
      this.fault = unreadableEvent(err);
    }
  }

  private fail(error: AppError, code: StreamFaultCode): void {
    if (this.upstreamOver) return;
    if (this.lastByte !== null) {
      // After its last event the provider had nothing more to say: its answer stands, whole.
      this.providerEnded();
      this.upstream.abort(error);
      return;
    }
    this.batch.write(this.reader.errorEvent?.(error, code) ?? errorEvent(error, code));
    this.flush();
    this.endUpstream();
    this.push(null);
    this.decide({ kind: 'failed', error, code, at: this.upstreamEndedAt });
    // Over first: the abort reports back as an upstream error, which must find the stream over.
    this.upstream.abort(error);
  }

  /** The provider ended its answer: the client's stream ends, and is done once the client has it. */
  private providerEnded(): void {
    if (this.upstreamOver) return;
    this.endUpstream();
    // What followed the last event (an unterminated line): the client gets the bytes the provider sent.
    const rest = this.framing.end();
    if (rest !== '') this.batch.pass(rest);
    this.flush();
    this.push(null);
    // No last event the reader knows: the answer is the whole stream.
    this.lastByte ??= this.pushedBytes;
    this.fenceLastByte();
    if (this.delivered) this.decide({ kind: 'ended', at: this.upstreamEndedAt });
  }

  private endUpstream(): void {
    this.upstreamOver = true;
    this.upstreamEndedAt = performance.now();
    this.clock.stop();
    // The provider is done; a client that then takes nothing more of the answer for as long as a
    // provider may stay silent is gone: the call is settled (499) rather than held open forever. A
    // slow reader of a long answer is not gone: the clock starts over whenever it took some bytes.
    let taken = this.bytesTaken();
    this.deliveryTimer = setTimeout(() => {
      if (this.outcome !== null) return;
      const now = this.bytesTaken();
      if (!this.delivered && now > taken) {
        taken = now;
        this.deliveryTimer?.refresh();
        return;
      }
      this.decide({ kind: this.delivered ? 'ended' : 'client_gone', at: this.upstreamEndedAt });
      (this.destination as { destroy?: () => void } | null)?.destroy?.();
      this.destroy();
    }, this.options.idleTimeoutMs);
  }

  /**
   * The bytes of the answer the client's connection has taken: those handed to it, less those still
   * waiting in its socket's own buffer (which the kernel takes only as the client reads).
   */
  private bytesTaken(): number {
    const socket = (this.destination as { socket?: { writableLength?: number } | null } | null)?.socket;
    return this.handedBytes - (socket?.writableLength ?? 0);
  }

  /** The client's connection closed, or its stream was destroyed, before the stream was settled. */
  private clientGone(): void {
    if (this.outcome !== null) return;
    if (!this.upstreamOver) {
      this.endUpstream();
      // Over first: the abort reports back as an upstream error, which must find the stream over.
      this.upstream.abort(new AppError(499, 'client_disconnected', 'client disconnected'));
    }
    this.decide({ kind: this.delivered ? 'ended' : 'client_gone', at: this.upstreamEndedAt });
  }

  /** Once the answer's last byte has been handed to the client's connection: an empty write after it. */
  private fenceLastByte(): void {
    const { destination, lastByte } = this;
    if (this.fenced || destination === null || lastByte === null || this.handedBytes < lastByte) return;
    this.fenced = true;
    destination.write(EMPTY, (err) => {
      if (err === undefined || err === null) this.onDelivered();
    });
  }

  private onDelivered(): void {
    this.delivered = true;
    if (this.upstreamOver) this.decide({ kind: 'ended', at: this.upstreamEndedAt });
  }

  /** The one end of the call: the reader completes the log, then the log is recorded. */
  private decide(outcome: StreamOutcome): void {
    if (this.outcome !== null) return;
    this.outcome = outcome;
    if (this.deliveryTimer !== null) clearTimeout(this.deliveryTimer);
    void Promise.resolve()
      .then(() => this.options.onEnd(outcome))
      .catch(() => undefined);
  }

  /** The batch to the client; `chunk`: the provider's chunk it came from, when there is one. */
  private flush(chunk: Buffer | null = null): void {
    const batch = this.batch.take(chunk);
    if (batch === null) return;
    this.pushOut(batch);
    if (this.lastInBatch) {
      this.lastInBatch = false;
      this.lastByte = this.pushedBytes;
      this.fenceLastByte();
    }
  }

  /**
   * Everything the client gets goes through here. A push that finds the buffer full (false) holds the
   * provider back: the chunk itself is kept, and Node calls _read once the client has drained it.
   */
  private pushOut(text: string | Buffer): void {
    const chunk = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
    this.pushedBytes += chunk.length;
    // A large event (the Responses API's last ones hold the whole text) goes in slices: the connection
    // takes each as the client reads, so the bytes it has taken (bytesTaken) tell the client's progress.
    let room = true;
    for (let at = 0; at < chunk.length; at += PUSH_SLICE) room = this.push(chunk.subarray(at, at + PUSH_SLICE));
    if (room || this.paused || this.upstreamOver) return;
    this.paused = true;
    this.clock.pause();
    this.upstream.pause();
  }
}
