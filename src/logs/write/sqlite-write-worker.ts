/**
 * The log-writing worker thread for SQLite. better-sqlite3 is synchronous, so a batch written on the
 * event loop's thread (and the WAL checkpoint that sometimes follows a commit) stalls every request in
 * flight; here it runs on its own thread, with its own connection to the same file (WAL lets the main
 * thread read meanwhile).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openSqlite } from '../../db/sqlite-open.js';
import type { NewLog } from './new-log.js';
import { prepareBatchWrite } from './sqlite-batch.js';

export interface WriteRequest {
  id: number;
  logs: readonly NewLog[];
}

export type WriteReply = { id: number; ok: true } | { id: number; ok: false; code: string; message: string };

const sqlite = openSqlite((workerData as { path: string }).path, 'writer');
const write = prepareBatchWrite(sqlite);

parentPort!.on('message', ({ id, logs }: WriteRequest) => {
  let reply: WriteReply;
  try {
    write(logs);
    reply = { id, ok: true };
  } catch (err) {
    const e = err as { code?: unknown; message?: unknown };
    reply = { id, ok: false, code: String(e.code ?? ''), message: String(e.message ?? err) };
  }
  parentPort!.postMessage(reply);
});
