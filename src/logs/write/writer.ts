/**
 * The log writer: logs are written in batches off the event loop. A group (one call's log, or one
 * all-or-nothing batch) is written in one transaction.
 *
 * - Two kinds of group. A proxied call's log is queued (`enqueue`): its caller has its answer already,
 *   and the log is written within the flush interval. A logging-API call's logs are written before
 *   it is answered (`write` resolves once they are committed): group commit — every write waiting
 *   when a batch starts shares its transaction — keeps that durable acknowledgement cheap.
 *
 * - A batch goes out when `batchSize` logs wait or `intervalMs` after the first one arrived, so a log is
 *   visible well within a second.
 * - While the database fails, batches stay queued and are retried with backoff; `healthy` turns false
 *   and /health reports it. The queue is bounded: when full, `enqueue` refuses (the caller answers 503)
 *   rather than acknowledging a log it might lose.
 * - A batch that fails while the database answers has a bad row: its groups are retried one by one and
 *   only the offending group is dropped (and reported), so one bad log cannot block the rest.
 * - `close()` first waits for tracked work (calls whose log is queued only when they end, such as a
 *   proxied call whose client has already gone), then writes everything queued before returning.
 */
import type { FastifyBaseLogger } from 'fastify';
import { unavailableReason } from '../../db/unavailable.js';
import { AppError } from '../../errors.js';
import type { DeadLetterStore } from './dead-letters.js';
import type { LogInserter } from './inserter.js';
import type { NewLog } from './new-log.js';

export interface LogWriterOptions {
  batchSize?: number;
  intervalMs?: number;
  maxQueued?: number;
  /** Longest wait between retries while the database is down. */
  maxBackoffMs?: number;
  /** How long close() keeps retrying an unavailable database before giving up. */
  closeTimeoutMs?: number;
  /** Where logs the database refuses are kept; without one they are counted in `dropped` only (logs). */
  deadLetters?: DeadLetterStore;
}

interface Group {
  logs: readonly NewLog[];
  seq: number;
  /** Set for a `write`: its caller waits for the commit. */
  durable?: { resolve: () => void; reject: (err: AppError) => void };
}

/** A durable write that found the database unavailable: the caller answers 503 and may retry. */
const storeUnavailable = () =>
  new AppError(
    503,
    'log_store_unavailable',
    'The log store is unavailable; the log was not stored. Retry shortly.',
    null,
    { 'retry-after': '1' },
  );

export class LogWriter {
  private readonly queue: Group[] = [];
  private readonly pendingIds = new Set<string>();
  private queued = 0;
  private enqueuedSeq = 0;
  private timer: NodeJS.Timeout | null = null;
  /** performance.now() time the pending timer is due. */
  private timerDueAt = 0;
  private running: Promise<void> | null = null;
  private backoffMs = 0;
  /** performance.now() time logs were last queued or a batch last ended. */
  private lastActivity = performance.now();
  private closed = false;
  private waiters: { seq: number; resolve: () => void }[] = [];
  /** Durable groups queued and not yet settled. */
  private durableWaiting = 0;
  /** Work that will queue logs when it ends (see track). */
  private readonly tracked = new Set<Promise<unknown>>();
  private readonly opts: Required<Omit<LogWriterOptions, 'deadLetters'>>;
  private readonly deadLetters: DeadLetterStore | null;
  /** False while the last attempt to write failed because the database did not answer. */
  healthy = true;
  /** Dead letters stored, this run and earlier ones (0 without a store). */
  /** Where refused logs are kept (null: nowhere). */
  get deadLetterStore(): DeadLetterStore | null {
    return this.deadLetters;
  }

  get deadLetterCount(): number {
    return this.deadLetters?.count ?? 0;
  }

  /** Groups the database refused while answering (kept as dead letters when a store is set). */
  dropped = 0;
  /** Since start, for /metrics: batches committed, logs written, failed write attempts. */
  readonly stats = { batches: 0, written: 0, failedAttempts: 0 };
  /** Called after each commit (the live tail reads the new logs at once rather than at its next poll). */
  private readonly committedListeners = new Set<() => void>();

  constructor(
    private readonly inserter: LogInserter,
    private readonly log: FastifyBaseLogger,
    options: LogWriterOptions = {},
  ) {
    this.opts = {
      batchSize: 500,
      intervalMs: 50,
      maxQueued: 100_000,
      maxBackoffMs: 5_000,
      closeTimeoutMs: 30_000,
      ...options,
    };
    this.deadLetters = options.deadLetters ?? null;
  }

  /** Number of logs waiting to be written. */
  get backlog(): number {
    return this.queued;
  }

  /** Milliseconds since logs were last queued or written; 0 while any wait (the search indexer defers to it). */
  get idleMs(): number {
    return this.queued > 0 || this.running ? 0 : performance.now() - this.lastActivity;
  }

  /** Queues logs to be written together; throws a 503 AppError when the queue is full. */
  enqueue(logs: readonly NewLog[]): void {
    if (logs.length === 0) return;
    if (this.closed) throw new AppError(503, 'shutting_down', 'The service is shutting down; retry shortly.');
    if (this.queued + logs.length > this.opts.maxQueued) {
      throw new AppError(
        503,
        'log_buffer_full',
        'The log store is unavailable and the log buffer is full; retry later.',
      );
    }
    this.queue.push({ logs, seq: ++this.enqueuedSeq });
    this.queued += logs.length;
    this.lastActivity = performance.now();
    for (const l of logs) this.pendingIds.add(l.row.unique_id);
    if (this.queued >= this.opts.batchSize) this.kick(0);
    else this.kick(this.opts.intervalMs);
  }

  /**
   * Writes logs as one group and resolves once they are committed: the caller may acknowledge them
   * as stored. Rejects with a 503 when the database is unavailable (the logs are not kept: the caller's
   * client retries) or the queue is full.
   */
  write(logs: readonly NewLog[]): Promise<void> {
    if (logs.length === 0) return Promise.resolve();
    if (this.closed)
      return Promise.reject(new AppError(503, 'shutting_down', 'The service is shutting down; retry shortly.'));
    if (this.queued + logs.length > this.opts.maxQueued) {
      return Promise.reject(
        new AppError(503, 'log_buffer_full', 'The log store is unavailable and the log buffer is full; retry later.'),
      );
    }
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ logs, seq: ++this.enqueuedSeq, durable: { resolve, reject } });
      this.queued += logs.length;
      this.lastActivity = performance.now();
      for (const l of logs) this.pendingIds.add(l.row.unique_id);
      this.durableWaiting += 1;
      this.kick(0, true);
    });
  }

  /**
   * Calls `listener` after every batch this writer commits; answers the function that stops it. The
   * listener runs synchronously on the writer's path: it must only schedule work, never do it.
   */
  onCommitted(listener: () => void): () => void {
    this.committedListeners.add(listener);
    return () => this.committedListeners.delete(listener);
  }

  private committed(): void {
    for (const listener of this.committedListeners) {
      try {
        listener();
      } catch (err) {
        this.log.error({ err }, 'a commit listener failed');
      }
    }
  }

  /** Whether `count` more logs can be queued now. */
  hasRoom(count: number): boolean {
    return !this.closed && this.queued + count <= this.opts.maxQueued;
  }

  /** True while a log with this unique_id is queued and not yet written. */
  isPending(uniqueId: string): boolean {
    return this.pendingIds.has(uniqueId);
  }

  /** Resolves once every log queued before this call has been written (or dropped). */
  flush(): Promise<void> {
    const target = this.enqueuedSeq;
    if (this.settledSeq() >= target) return Promise.resolve();
    this.kick(0);
    return new Promise((resolve) => this.waiters.push({ seq: target, resolve }));
  }

  /**
   * Keeps the writer open until `work` settles: the HTTP server may have closed (its client hung up)
   * while a proxied call still waits for the provider, and that call's log must still be written.
   */
  track<T>(work: Promise<T>): Promise<T> {
    this.tracked.add(work);
    const untrack = () => this.tracked.delete(work);
    work.then(untrack, untrack);
    return work;
  }

  /**
   * Waits for tracked work, then stops accepting logs and writes what is queued; gives up after
   * closeTimeoutMs in all.
   */
  async close(): Promise<void> {
    let timeout: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<void>((resolve) => (timeout = setTimeout(resolve, this.opts.closeTimeoutMs)));
    const settled = Promise.allSettled([...this.tracked]).then(() => undefined);
    await Promise.race([settled, gaveUp]);
    this.closed = true;
    await Promise.race([this.flush(), gaveUp]);
    clearTimeout(timeout);
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.refuseDurable(() => new AppError(503, 'shutting_down', 'The service is shutting down; retry shortly.'));
    if (this.queued > 0) this.log.error({ lost: this.queued }, 'log writer closed with logs it could not write');
    await this.inserter.close?.();
  }

  /** Schedules a drain. `urgent` (a durable write waits) ignores the backoff of an outage. */
  private kick(delayMs: number, urgent = false): void {
    if (this.running) return;
    const delay = urgent ? 0 : Math.max(delayMs, this.backoffMs);
    if (this.timer) {
      // A drain is already due as soon or sooner: rescheduling it would postpone it again and again
      // while writes keep arriving (a durable write every millisecond once pushed it back by tens).
      if (this.timerDueAt <= performance.now() + delay) return;
      clearTimeout(this.timer);
    }
    this.timerDueAt = performance.now() + delay;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.drain().finally(() => {
        this.running = null;
        this.lastActivity = performance.now();
        if (this.durableWaiting > 0) this.kick(0, true);
        else if (this.queue.length > 0) this.kick(this.queued >= this.opts.batchSize ? 0 : this.opts.intervalMs);
      });
    }, delay);
    this.timer.unref?.();
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch: Group[] = [];
      let size = 0;
      for (const group of this.queue) {
        if (batch.length > 0 && size + group.logs.length > this.opts.batchSize) break;
        batch.push(group);
        size += group.logs.length;
      }
      try {
        await this.inserter.insert(batch.flatMap((g) => g.logs));
      } catch (err) {
        this.stats.failedAttempts += 1;
        if (await this.inserter.isOutage(err)) {
          this.markUnavailable(err);
          this.refuseDurable(storeUnavailable);
          return;
        }
        // The batch failed but the store answers: each group is tried alone, and any that is written
        // shows the store is back (the first batch after an outage may fail on a connection it broke).
        if ((await this.writeOneByOne(batch)) > 0) this.markAvailable();
        this.settle(batch);
        continue;
      }
      this.stats.batches += 1;
      this.stats.written += size;
      this.committed();
      this.settle(batch);
      this.markAvailable();
    }
  }

  private markAvailable(): void {
    if (!this.healthy) this.log.info('log store available again; queued logs written');
    this.healthy = true;
    this.backoffMs = 0;
  }

  /** Writes each group of a failed batch alone; a group the database refuses is a dead letter. Returns how many were written. */
  private async writeOneByOne(batch: Group[]): Promise<number> {
    let written = 0;
    for (const group of batch) {
      try {
        await this.inserter.insert(group.logs);
        this.stats.batches += 1;
        this.stats.written += group.logs.length;
        written += 1;
        this.committed();
      } catch (err) {
        this.stats.failedAttempts += 1;
        this.dropped += group.logs.length;
        const uniqueIds = group.logs.map((l) => l.row.unique_id);
        try {
          await this.deadLetters?.keep(group.logs, err);
          this.log.error(
            { err, unique_ids: uniqueIds, dead_letters: this.deadLetters?.count },
            'the database refused a log; kept as a dead letter',
          );
        } catch (keepErr) {
          this.log.error(
            { err, keepErr, unique_ids: uniqueIds },
            'the database refused a log, and its dead letter too',
          );
        }
        if (group.durable) {
          const message = 'The database refused this log; it was not stored (it is kept as a dead letter).';
          group.durable.reject(new AppError(500, 'log_refused', message, null, {}, err));
          group.durable = undefined;
          this.durableWaiting -= 1;
        }
      }
    }
    return written;
  }

  /** Takes every durable group out of the queue, rejecting its caller with `error`. */
  private refuseDurable(error: () => AppError): void {
    const kept: Group[] = [];
    for (const group of this.queue) {
      if (!group.durable) {
        kept.push(group);
        continue;
      }
      group.durable.reject(error());
      this.durableWaiting -= 1;
      this.queued -= group.logs.length;
      for (const l of group.logs) this.pendingIds.delete(l.row.unique_id);
    }
    this.queue.splice(0, this.queue.length, ...kept);
    this.resolveWaiters();
  }

  private markUnavailable(err: unknown): void {
    if (this.healthy) {
      const why = unavailableReason(err) === 'disk_full' ? ' (its disk is full)' : '';
      this.log.error({ err, backlog: this.queued }, `log store unavailable${why}; logs are kept and retried`);
    }
    this.healthy = false;
    this.backoffMs = Math.min(this.opts.maxBackoffMs, Math.max(100, this.backoffMs * 2));
  }

  private settle(batch: Group[]): void {
    this.queue.splice(0, batch.length);
    for (const group of batch) {
      this.queued -= group.logs.length;
      for (const l of group.logs) this.pendingIds.delete(l.row.unique_id);
      if (group.durable) {
        group.durable.resolve();
        this.durableWaiting -= 1;
      }
    }
    this.resolveWaiters();
  }

  /** Every group up to this sequence number is settled (written, refused or dropped). */
  private settledSeq(): number {
    return this.queue.length > 0 ? this.queue[0].seq - 1 : this.enqueuedSeq;
  }

  private resolveWaiters(): void {
    const settled = this.settledSeq();
    const ready = this.waiters.filter((w) => w.seq <= settled);
    this.waiters = this.waiters.filter((w) => w.seq > settled);
    for (const w of ready) w.resolve();
  }
}
