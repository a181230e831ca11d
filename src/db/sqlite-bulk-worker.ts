/**
 * The SQLite bulk-write thread: writes that touch many rows in one transaction (copying 100,000 logs
 * into a dataset takes seconds) run here on their own connection, so the event loop keeps serving.
 */
import type SQLite from 'better-sqlite3';
import { workerData } from 'node:worker_threads';
import { serveJobs } from '../workers/serve.js';
import { openSqlite } from './sqlite-open.js';

export interface BulkJob {
  sql: string;
  parameters: readonly unknown[];
}

export interface BulkResult {
  rows: unknown[];
  changes: number;
  lastInsertRowid: number;
}

// Background work (the retention sweep, dataset copies, the search index), yet at the normal priority:
// its transactions hold SQLite's one write lock, which the log writer and the admissions of proxied
// calls wait for. At nice 10, on a machine whose cores are all busy, a 50 ms batch held the lock for
// seconds (priority inversion: the log writer gave up with "database is locked" after its 5 s wait, and
// admissions queued behind it). Its batches are small; between them it holds nothing.
const sqlite = openSqlite((workerData as { path: string }).path, 'reader');
const statements = new Map<string, SQLite.Statement>();

serveJobs<BulkJob, BulkResult>(({ sql, parameters }) => {
  // incremental_vacuum frees one page per step of its statement, and run() steps once: exec() runs it whole.
  if (parameters.length === 0 && /^pragma incremental_vacuum\b/i.test(sql)) {
    sqlite.exec(sql);
    return { rows: [], changes: 0, lastInsertRowid: 0 };
  }
  let statement = statements.get(sql);
  if (!statement) {
    statement = sqlite.prepare(sql);
    if (statements.size >= 500) statements.clear();
    statements.set(sql, statement);
  }
  if (statement.reader) return { rows: statement.all(...parameters) as unknown[], changes: 0, lastInsertRowid: 0 };
  const { changes, lastInsertRowid } = statement.run(...parameters);
  return { rows: [], changes, lastInsertRowid: Number(lastInsertRowid) };
});
