/** The worker side of WorkerPool (pool.ts): answers each job with its result or its error. */
import { parentPort } from 'node:worker_threads';

export type JobReply<Res> =
  { id: number; ok: true; result: Res } | { id: number; ok: false; code: string; message: string };

/**
 * A job as the pool sends it. `running` is shared with the pool: a job's work may set it to 1 while
 * it runs native work that only ends on its own (a SQLite statement), so that the pool can tell
 * whether an ended thread still runs it (pool.ts `threads`).
 */
export interface JobMessage<Req> {
  id: number;
  request: Req;
  running: Int32Array;
}

/** Marks a thread's native work: `running` is 1 while `work` runs. */
export function runningNative<T>(running: Int32Array, work: () => T): T {
  Atomics.store(running, 0, 1);
  try {
    return work();
  } finally {
    Atomics.store(running, 0, 0);
  }
}

export function serveJobs<Req, Res>(handle: (request: Req, running: Int32Array) => Res | Promise<Res>): void {
  parentPort!.on('message', async ({ id, request, running }: JobMessage<Req>) => {
    let reply: JobReply<Res>;
    try {
      reply = { id, ok: true, result: await handle(request, running) };
    } catch (err) {
      const e = err as { code?: unknown; message?: unknown };
      reply = { id, ok: false, code: String(e.code ?? ''), message: String(e.message ?? err) };
    }
    parentPort!.postMessage(reply);
  });
}
