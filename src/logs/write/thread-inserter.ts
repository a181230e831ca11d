/**
 * A log inserter on a thread of its own: each batch is posted to a worker thread holding its own
 * connection to the database, which writes it in one transaction and replies. On SQLite (its driver is
 * synchronous) a batch written on the event loop's thread would stall every request in flight; on
 * PostgreSQL the batch's SQL text, its parameters and its round trips are the log writer's largest share
 * of the event loop under load, and a large batch built there is a proxied call's tail latency.
 */
import { Worker } from 'node:worker_threads';
import type { NewLog } from './new-log.js';
import type { LogInserter } from './log-inserter.js';

export interface WriteRequest {
  id: number;
  logs: readonly NewLog[];
}

export type WriteReply = { id: number; ok: true } | { id: number; ok: false; code: string; message: string };

/** A batch's failure as the thread reported it: the database's message and error code. */
export class WriteError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

/** The reply of a write request, whatever the thread's write threw. */
export function replyOf(id: number, err: unknown): WriteReply {
  if (err === undefined) return { id, ok: true };
  const e = err as { code?: unknown; message?: unknown } | null;
  return { id, ok: false, code: String(e?.code ?? ''), message: String(e?.message ?? err) };
}

export interface ThreadInserterOptions {
  /** The worker's module. */
  script: URL;
  workerData: unknown;
  /** The error code of a thread that could not start or died: an outage, retried later. */
  deathCode: string;
  isOutage(err: unknown): Promise<boolean>;
  /** Called as each batch's transaction ends (whether it committed). */
  onReply?: () => void;
}

export class ThreadInserter implements LogInserter {
  private worker: Worker | null = null;
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();

  constructor(private readonly opts: ThreadInserterOptions) {
    // Started now, not at the first batch: a thread's start (Node, the driver, the connection, statements
    // prepared) takes a few hundred milliseconds on a loaded machine, and the first batch may be the one
    // a shutdown writes in its last half-second.
    this.worker = this.start();
  }

  private start(): Worker {
    const worker = new Worker(this.opts.script, {
      workerData: this.opts.workerData,
      // The thread's garbage is one batch at a time: a young generation of 12 MB (V8 lets it grow to
      // 48) keeps its memory down by about 10 MB under load; at 4 MB its collections cost throughput.
      resourceLimits: { maxYoungGenerationSizeMb: 12 },
    });
    worker.on('message', (reply: WriteReply) => {
      const waiter = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (this.pending.size === 0) worker.unref();
      this.opts.onReply?.();
      if (reply.ok) waiter?.resolve();
      else waiter?.reject(new WriteError(reply.message, reply.code));
    });
    // Idle, the thread must not keep the process alive; while a batch is out, it must (see insert).
    worker.unref();
    // A worker that died (it could not open the database, say) is an outage: the writer keeps the logs,
    // retries with backoff, and the next insert starts a new worker.
    const failAll = (message: string) => {
      if (this.worker === worker) this.worker = null;
      for (const waiter of this.pending.values()) waiter.reject(new WriteError(message, this.opts.deathCode));
      this.pending.clear();
    };
    worker.on('error', (err) => failAll(`log writer thread failed: ${err.message}`));
    worker.on('exit', (code) => failAll(`log writer thread exited with code ${code}`));
    return worker;
  }

  insert(logs: readonly NewLog[]): Promise<void> {
    this.worker ??= this.start();
    const id = ++this.nextId;
    const request: WriteRequest = { id, logs };
    if (this.pending.size === 0) this.worker.ref();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker!.postMessage(request);
    });
  }

  /** A thread that died is an outage (the next insert starts another), whatever the database says. */
  async isOutage(err: unknown): Promise<boolean> {
    if (err instanceof WriteError && err.code === this.opts.deathCode) return true;
    return this.opts.isOutage(err);
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
  }
}
