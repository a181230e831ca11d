/**
 * A small pool of worker threads running one kind of job, so that work that would hold the event loop
 * (token counting of long texts, SQLite reads) runs beside it. Jobs wait in one queue and go to the
 * first free worker.
 *
 * A job may carry a deadline and an AbortSignal. A queued job that passes either is dropped; a running
 * one ends its worker (`terminate`), which stops the work as soon as it returns to JavaScript — native
 * work in progress (a SQLite statement) first runs to its end, or to its next call of a JavaScript
 * function (db/stop-point.ts). A thread so ended is replaced at once,
 * so new jobs do not wait for it, but only up to `maxThreads` threads in all: ended work can never make
 * more than that many threads run.
 */
import { type ResourceLimits, Worker } from 'node:worker_threads';
import { AppError } from '../errors.js';
import type { JobMessage, JobReply } from './serve.js';

export interface JobOptions {
  /** performance.now() time after which the job is given up with `timeoutError`. */
  deadline?: number;
  signal?: AbortSignal;
}

export interface PoolThreads {
  working: number;
  ending: number;
  running: number;
}

export interface PoolOptions {
  /** Worker threads taking jobs at most. */
  size: number;
  /** Threads in all, counting ended ones still finishing their native work (default: twice `size`). */
  maxThreads?: number;
  workerData?: unknown;
  resourceLimits?: ResourceLimits;
  /** The error a job past its deadline fails with. */
  timeoutError: () => AppError;
}

interface Job<Req, Res> {
  id: number;
  request: Req;
  resolve: (value: Res) => void;
  reject: (err: unknown) => void;
  options: JobOptions;
  timer: NodeJS.Timeout | null;
  onAbort: (() => void) | null;
}

interface Slot<Req, Res> {
  worker: Worker | null;
  job: Job<Req, Res> | null;
  /** The thread was told to terminate and has not exited yet: the slot cannot take work. */
  ending: boolean;
  /** Shared with the thread: 1 while its job runs native work (serve.ts), an ended one's too until it exits. */
  running: Int32Array;
}

export class WorkerPool<Req, Res> {
  private readonly slots: Slot<Req, Res>[] = [];
  private readonly queue: Job<Req, Res>[] = [];
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly file: URL,
    private readonly options: PoolOptions,
  ) {}

  run(request: Req, options: JobOptions = {}): Promise<Res> {
    if (this.closed) return Promise.reject(new AppError(503, 'shutting_down', 'gatelog is shutting down.'));
    return new Promise<Res>((resolve, reject) => {
      const job: Job<Req, Res> = { id: this.nextId++, request, resolve, reject, options, timer: null, onAbort: null };
      if (options.signal?.aborted) return reject(options.signal.reason);
      if (options.deadline !== undefined) {
        const wait = Math.max(0, options.deadline - performance.now());
        job.timer = setTimeout(() => this.giveUp(job, this.options.timeoutError()), wait);
      }
      if (options.signal) {
        job.onAbort = () => this.giveUp(job, options.signal!.reason);
        options.signal.addEventListener('abort', job.onAbort, { once: true });
      }
      this.queue.push(job);
      this.dispatch();
    });
  }

  /**
   * Threads given a job (`working`), threads told to end — their job given up past its deadline or by
   * its caller — that have not exited yet (`ending`), and of all these the threads running native work
   * of a job right now (`running`, as the threads themselves mark it: serve.ts runningNative): an ended
   * one still running it goes on until that work stops, such as a SQLite statement.
   */
  threads(): PoolThreads {
    const live = this.slots.filter((s) => s.worker !== null);
    return {
      working: live.filter((s) => s.job !== null).length,
      ending: live.filter((s) => s.ending).length,
      running: live.filter((s) => Atomics.load(s.running, 0) === 1).length,
    };
  }

  /**
   * Ends every thread; jobs still waiting fail. Threads already ended are not waited for: they may be
   * finishing a long native call, and they hold nothing that needs closing.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) this.settle(job, new AppError(503, 'shutting_down', 'Shutting down.'));
    await Promise.all(this.slots.filter((slot) => !slot.ending).map((slot) => slot.worker?.terminate()));
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => s.job === null && !s.ending);
      const working = this.slots.filter((s) => !s.ending).length;
      const maxThreads = this.options.maxThreads ?? this.options.size * 2;
      if (!slot && working < this.options.size && this.slots.length < maxThreads) {
        slot = { worker: null, job: null, ending: false, running: new Int32Array(new SharedArrayBuffer(4)) };
        this.slots.push(slot);
      }
      if (!slot) return;
      const job = this.queue.shift()!;
      slot.worker ??= this.start(slot);
      slot.job = job;
      slot.worker.ref();
      const message: JobMessage<Req> = { id: job.id, request: job.request, running: slot.running };
      slot.worker.postMessage(message);
    }
  }

  private start(slot: Slot<Req, Res>): Worker {
    const worker = new Worker(this.file, {
      workerData: this.options.workerData,
      resourceLimits: this.options.resourceLimits,
    });
    worker.unref();
    worker.on('message', (reply: JobReply<Res>) => {
      const job = slot.job;
      if (!job || job.id !== reply.id) return;
      slot.job = null;
      worker.unref();
      if (reply.ok) this.settle(job, null, reply.result);
      else this.settle(job, Object.assign(new Error(reply.message), { code: reply.code }));
      this.dispatch();
    });
    worker.on('error', (err) => {
      if (slot.job) this.settle(slot.job, err);
      slot.job = null;
    });
    worker.on('exit', () => {
      if (slot.worker !== worker) return;
      if (slot.job) this.settle(slot.job, new Error('worker thread exited'));
      // An ended thread's slot goes; a live slot whose thread died takes a new thread with its next job.
      if (slot.ending) this.slots.splice(this.slots.indexOf(slot), 1);
      slot.job = null;
      slot.worker = null;
      slot.ending = false;
      Atomics.store(slot.running, 0, 0);
      this.dispatch();
    });
    return worker;
  }

  /** A job past its deadline or aborted: dropped from the queue, or its thread ended. */
  private giveUp(job: Job<Req, Res>, err: unknown): void {
    const queued = this.queue.indexOf(job);
    if (queued >= 0) {
      this.queue.splice(queued, 1);
      this.settle(job, err);
      return;
    }
    const slot = this.slots.find((s) => s.job === job);
    if (!slot) return;
    this.settle(job, err);
    slot.job = null;
    slot.ending = true;
    slot.worker?.unref();
    void slot.worker?.terminate();
  }

  private settle(job: Job<Req, Res>, err: unknown, result?: Res): void {
    if (job.timer) clearTimeout(job.timer);
    if (job.onAbort) job.options.signal?.removeEventListener('abort', job.onAbort);
    job.timer = null;
    job.onAbort = null;
    if (err) job.reject(err);
    else job.resolve(result as Res);
  }
}
