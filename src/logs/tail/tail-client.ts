/**
 * One live-tail connection (GET /api/request-logs/stream/): what it wants (scope and filter), and the
 * Server-Sent Events stream it is sent. Writing never waits for the reader: events go into the stream's
 * buffer, and a reader whose buffer passes `maxBufferBytes` is ended rather than buffered without bound
 * (its client reconnects with Last-Event-ID and gets the backlog).
 */
import { Readable } from 'node:stream';
import type { FilterNode } from '../../filters/types.js';
import type { LogScope } from '../list/scope.js';

/** Ids a tail remembers having sent (a late commit arrives within seconds, far fewer logs back). */
const RECENT_IDS = 20_000;

/** Why a tail ended, sent as the data of its last event (`event: end`). */
export type TailEndReason = 'shutdown' | 'key_revoked' | 'too_slow';

export interface TailSubscription {
  /** The organization and environments; the time range only when the caller gave one. */
  scope: LogScope;
  filter: FilterNode | null;
  /** The request's Authorization header (or x-api-key), checked again while the tail lasts. */
  credential: string;
  /** Last-Event-ID: deliver the logs after this id first (bounded backlog). */
  afterId: number | null;
}

/** One SSE event of a log: its id, the event name, and the list item as JSON on one data line. */
export const logEvent = (id: number, item: unknown): Buffer =>
  Buffer.from(`id: ${id}\nevent: log\ndata: ${JSON.stringify(item)}\n\n`);

/** A log's event, made once and shared by every tail that sends it (a Buffer is queued, not copied). */
export interface TailEvent {
  id: number;
  chunk: Buffer;
}

export class TailClient {
  readonly stream = new Readable({ read() {} });
  /** The highest log id sent: nothing at or below it is sent again. */
  lastSent: number;
  /** Last-Event-ID: the reader has every log up to it. */
  private readonly resumedAfter: number;
  private readonly recent = new Set<number>();
  /** True until the backlog is sent; live events wait in `held` meanwhile. */
  catchingUp: boolean;
  private held: TailEvent[] = [];
  private heldBytes = 0;
  ended = false;
  /** Set by the hub: called once when the tail ends, whatever the reason. */
  onEnd: () => void = () => {};

  constructor(
    readonly subscription: TailSubscription,
    /** Clients with equal keys see the same logs: their filter is evaluated once per poll. */
    readonly groupKey: string,
    private readonly maxBufferBytes: number,
  ) {
    this.lastSent = subscription.afterId ?? 0;
    this.resumedAfter = subscription.afterId ?? 0;
    this.catchingUp = subscription.afterId !== null;
    this.stream.on('close', () => this.finish());
  }

  /** Whether a log of this organization, environment and time is in the tail's scope (filters aside). */
  inScope(organizationId: string, isTest: boolean, timestamp: number): boolean {
    const { scope } = this.subscription;
    return (
      organizationId === scope.organizationId &&
      (scope.isTest === null || scope.isTest === isTest) &&
      timestamp >= scope.start &&
      timestamp <= scope.end
    );
  }

  /** Live events, in id order. While the backlog is read they are held (bounded like the stream). */
  deliver(events: readonly TailEvent[], joined: Buffer | null = null): void {
    if (this.ended) return;
    if (this.catchingUp) {
      for (const e of events) {
        this.held.push(e);
        this.heldBytes += e.chunk.length;
      }
      if (this.heldBytes > this.maxBufferBytes) this.end('too_slow');
      return;
    }
    // Nothing of these sent yet: the shared buffer of them all goes out in one write.
    if (joined !== null && events.length > 0 && events[0].id > this.lastSent) {
      if (this.tooFarBehind()) return;
      for (const e of events) this.sent(e.id);
      this.stream.push(joined);
      return;
    }
    this.write(events);
  }

  /** The backlog, then what was held while it was read. */
  caughtUp(backlog: readonly TailEvent[]): void {
    this.catchingUp = false;
    const held = this.held;
    this.held = [];
    this.heldBytes = 0;
    this.write(backlog);
    this.write(held);
  }

  /** A comment line: keeps proxies from closing a quiet connection. */
  comment(text: string): void {
    if (!this.ended) this.push(`: ${text}\n\n`);
  }

  /**
   * Ends the tail with a last `event: end` naming why. A reader that keeps up gets it; one that is too
   * far behind (or a shutdown with unsent events) is cut at once, so nothing waits for it.
   */
  end(reason: TailEndReason): void {
    if (this.ended) return;
    this.ended = true;
    if (reason === 'too_slow' || this.stream.readableLength > 0) {
      this.stream.destroy();
    } else {
      this.stream.push(`event: end\ndata: ${JSON.stringify({ reason })}\n\n`);
      this.stream.push(null);
    }
    this.finish();
  }

  private write(events: readonly TailEvent[]): void {
    if (events.length === 0 || this.tooFarBehind()) return;
    for (const e of events) {
      // A log that committed late (PostgreSQL: an id below one already sent) still goes out, once.
      if (e.id <= this.resumedAfter || this.recent.has(e.id)) continue;
      this.sent(e.id);
      this.stream.push(e.chunk);
    }
  }

  /** Remembers an id as sent: the newest RECENT_IDS of them, enough to drop what arrives twice. */
  private sent(id: number): void {
    this.lastSent = Math.max(this.lastSent, id);
    this.recent.add(id);
    if (this.recent.size > RECENT_IDS) for (const oldest of this.recent) return void this.recent.delete(oldest);
  }

  private push(text: string): void {
    if (!this.tooFarBehind()) this.stream.push(text);
  }

  /**
   * A reader that left more than maxBufferBytes unread is too far behind: it is ended. Checked before
   * a poll's events are queued, not after: one poll may bring many logs at once, and a reader that keeps
   * up drains them before the next.
   */
  private tooFarBehind(): boolean {
    if (this.ended) return true;
    if (this.stream.readableLength <= this.maxBufferBytes) return false;
    this.end('too_slow');
    return true;
  }

  private finished = false;
  private finish(): void {
    this.ended = true;
    if (this.finished) return;
    this.finished = true;
    this.onEnd();
  }
}
