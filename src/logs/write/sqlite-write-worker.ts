/**
 * The log-writing worker thread for SQLite. better-sqlite3 is synchronous, so a batch written on the
 * event loop's thread (and the WAL checkpoint that sometimes follows a commit) stalls every request in
 * flight; here it runs on its own thread, with its own connection to the same file (WAL lets the main
 * thread read meanwhile).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openSqlite } from '../../db/sqlite-open.js';
import { prepareBatchWrite } from './sqlite-batch.js';
import { replyOf, type WriteRequest } from './thread-inserter.js';

const sqlite = openSqlite((workerData as { path: string }).path, 'writer');
const write = prepareBatchWrite(sqlite);

parentPort!.on('message', ({ id, logs }: WriteRequest) => {
  let failure: unknown;
  try {
    write(logs);
  } catch (err) {
    failure = err ?? new Error('unknown');
  }
  parentPort!.postMessage(replyOf(id, failure));
});
