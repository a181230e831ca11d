/**
 * The V8 heaps of a gatelog process a bench starts, after a full collection: what gatelog keeps, apart
 * from garbage not yet collected — in its main thread and in each worker thread (the log writer, the
 * SQLite readers, the token counter), each of which has a heap of its own. Loaded into that process
 * (`node --expose-gc --require …/heap-probe.js bin/gatelog.js serve`, see heapProbeArgs; `--require`,
 * unlike `--import`, also runs in worker threads), never part of gatelog itself. Every thread looks for
 * a request file every 250 ms; on a new one it collects all garbage and writes its heap's figures (and,
 * if asked, a heap snapshot, for comparing which objects a run leaves behind).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { isMainThread, threadId } from 'node:worker_threads';

export interface ThreadHeap {
  /** 0: the main thread. */
  threadId: number;
  /** V8 heap in use after the collection, MB. */
  heapUsedMb: number;
  /** V8 heap reserved (used or free), MB. */
  heapTotalMb: number;
  /** Memory of Buffers and other objects outside the V8 heap, MB. */
  externalMb: number;
}

export interface HeapFigures {
  /** Every thread's heap, the main thread first. */
  threads: ThreadHeap[];
  /** Summed over the threads. */
  heapUsedMb: number;
  heapTotalMb: number;
  externalMb: number;
}

interface Request {
  seq: number;
  /** A directory for heap snapshots, one a thread; none: no snapshots. */
  snapshots?: string;
}

const probeFiles = (pid: number) => ({
  dir: os.tmpdir(),
  request: path.join(os.tmpdir(), `gatelog-heap-${pid}.request`),
  prefix: `gatelog-heap-${pid}-thread-`,
});

/** Node.js options that load this probe into a process and all its threads. */
export function heapProbeArgs(): string[] {
  return ['--expose-gc', `--require=${fileURLToPath(import.meta.url)}`];
}

const gc = (globalThis as { gc?: () => void }).gc;
// Only in a process started with heapProbeArgs(): a bench that imports the helpers below has no gc().
if (gc) {
  const files = probeFiles(process.pid);
  let done = 0;
  setInterval(() => {
    let request: Request;
    try {
      request = JSON.parse(fs.readFileSync(files.request, 'utf8')) as Request;
    } catch {
      return; // none asked (or half written: the next look reads it)
    }
    if (request.seq === done) return;
    done = request.seq;
    // Twice: the first collection runs finalizers and weak callbacks, which free more for the second.
    gc();
    gc();
    if (request.snapshots) v8.writeHeapSnapshot(path.join(request.snapshots, `thread-${threadId}.heapsnapshot`));
    const mem = process.memoryUsage();
    const mb = (bytes: number) => bytes / 1024 / 1024;
    const figures: ThreadHeap = {
      threadId: isMainThread ? 0 : threadId,
      heapUsedMb: mb(mem.heapUsed),
      heapTotalMb: mb(mem.heapTotal),
      externalMb: mb(mem.external),
    };
    const file = path.join(files.dir, `${files.prefix}${threadId}.json`);
    fs.writeFileSync(`${file}.tmp`, JSON.stringify({ seq: request.seq, figures }));
    fs.renameSync(`${file}.tmp`, file);
  }, 250).unref();
}

/**
 * Asks every thread of the process `pid` (started with heapProbeArgs()) for its heap after a full
 * collection; with `snapshots` (a directory), each also writes a heap snapshot there. The process
 * should be idle: a thread answers between two of its tasks.
 */
export async function heapAfterGc(pid: number, snapshots?: string): Promise<HeapFigures> {
  const files = probeFiles(pid);
  const answers = () =>
    fs
      .readdirSync(files.dir)
      .filter((f) => f.startsWith(files.prefix) && f.endsWith('.json'))
      .map((f) => JSON.parse(fs.readFileSync(path.join(files.dir, f), 'utf8')) as { seq: number; figures: ThreadHeap })
      .filter((a) => a.seq === seq)
      .map((a) => a.figures);
  const seq = Date.now();
  fs.writeFileSync(`${files.request}.tmp`, JSON.stringify({ seq, snapshots } satisfies Request));
  fs.renameSync(`${files.request}.tmp`, files.request);
  // The main thread's answer, then until no thread has answered for 1.5 s (10 s with snapshots, which
  // take tens of seconds on a busy machine).
  let threads: ThreadHeap[] = [];
  let quietSince = Date.now();
  for (const deadline = Date.now() + 300_000; Date.now() < deadline;) {
    await new Promise((r) => setTimeout(r, 100));
    const now = answers();
    if (now.length !== threads.length) quietSince = Date.now();
    threads = now;
    if (threads.some((t) => t.threadId === 0) && Date.now() - quietSince > (snapshots ? 10_000 : 1500)) break;
  }
  fs.rmSync(files.request, { force: true });
  if (!threads.some((t) => t.threadId === 0)) throw new Error(`process ${pid} did not answer the heap probe`);
  threads.sort((a, b) => a.threadId - b.threadId);
  const sum = (key: keyof ThreadHeap) => threads.reduce((n, t) => n + t[key], 0);
  return { threads, heapUsedMb: sum('heapUsedMb'), heapTotalMb: sum('heapTotalMb'), externalMb: sum('externalMb') };
}

/** Removes the answers the process `pid` left (at its end). */
export function removeHeapProbeFiles(pid: number): void {
  const files = probeFiles(pid);
  for (const f of fs.readdirSync(files.dir)) {
    if (f.startsWith(files.prefix)) fs.rmSync(path.join(files.dir, f), { force: true });
  }
  fs.rmSync(files.request, { force: true });
}
