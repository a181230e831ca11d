/**
 * A SQLite reader thread: list queries (which can read much of a large file) run here on their own
 * read-only connection, beside the event loop; WAL lets them read while the log writer writes.
 */
import type SQLite from 'better-sqlite3';
import { workerData } from 'node:worker_threads';
import { lowerThisThreadPriority } from '../workers/priority.js';
import { runningNative, serveJobs } from '../workers/serve.js';
import { openSqlite } from './sqlite-open.js';

export interface ReadJob {
  sql: string;
  parameters: readonly unknown[];
}

export interface ReadResult {
  rows: unknown[];
}

// A heavy list may read for seconds: on a machine whose cores are all busy, the event loop (proxied
// calls, ingestion, /health) comes first and the list takes what is left.
lowerThisThreadPriority();
const sqlite = openSqlite((workerData as { path: string }).path, 'reader');
sqlite.pragma('query_only = ON');
const statements = new Map<string, SQLite.Statement>();

serveJobs<ReadJob, ReadResult>(({ sql, parameters }, running) => {
  let statement = statements.get(sql);
  if (!statement) {
    statement = sqlite.prepare(sql);
    // Queries differ by their number of values; keep the cache from growing without end.
    if (statements.size >= 500) statements.clear();
    statements.set(sql, statement);
  }
  if (!statement.reader) throw Object.assign(new Error('reader threads only read'), { code: 'READ_ONLY' });
  // Marked for the pool: a thread ended while its statement runs goes on until the statement stops.
  return { rows: runningNative(running, () => statement.all(...parameters) as unknown[]) };
});
