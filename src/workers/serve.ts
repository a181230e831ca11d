/** The worker side of WorkerPool (pool.ts): answers each job with its result or its error. */
import { parentPort } from 'node:worker_threads';

export type JobReply<Res> =
  { id: number; ok: true; result: Res } | { id: number; ok: false; code: string; message: string };

export function serveJobs<Req, Res>(handle: (request: Req) => Res | Promise<Res>): void {
  parentPort!.on('message', async ({ id, request }: { id: number; request: Req }) => {
    let reply: JobReply<Res>;
    try {
      reply = { id, ok: true, result: await handle(request) };
    } catch (err) {
      const e = err as { code?: unknown; message?: unknown };
      reply = { id, ok: false, code: String(e.code ?? ''), message: String(e.message ?? err) };
    }
    parentPort!.postMessage(reply);
  });
}
