/**
 * How the log writer stores a batch: atomically, in one transaction. SQLite files are written by a
 * worker thread (sqlite-write-worker.ts) so that writing never stalls request handling; an in-memory
 * SQLite database, which another thread cannot open, is written in-thread; PostgreSQL takes multi-row
 * INSERTs through Kysely.
 */
import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';
import { type Kysely, sql } from 'kysely';
import { databaseAnswers } from '../../db/answers.js';
import type { DbHandle } from '../../db/connect.js';
import type { Database } from '../../db/schema.js';
import type { NewLog } from './new-log.js';
import { insertLogs } from '../repository.js';
import { createMonthsOf, isMissingPartition } from '../../db/log-partitions.js';
import { isSqliteOutageCode } from '../../db/unavailable.js';
import { writeLockReleased } from '../../db/sqlite-write-lock.js';
import { prepareBatchWrite } from './sqlite-batch.js';
import type { WriteReply, WriteRequest } from './sqlite-write-worker.js';

export interface LogInserter {
  insert(logs: readonly NewLog[]): Promise<void>;
  /** Whether a failed insert means the store is unavailable (retry later) rather than a bad row. */
  isOutage(err: unknown): Promise<boolean>;
  /** Releases what the inserter holds (a worker thread); called once the writer has drained. */
  close?(): Promise<void>;
}

/** PostgreSQL: refresh the planner's statistics after this many logs (autovacuum is not relied on). */
export const ANALYZE_EVERY_LOGS = 100_000;

export class KyselyInserter implements LogInserter {
  private sinceAnalyze = 0;
  private analyzing: Promise<void> | null = null;

  /**
   * `analyzeEvery`: on PostgreSQL, run ANALYZE on the log tables after that many logs were written, so
   * that a large ingest does not leave the planner choosing plans for a table a tenth its size.
   */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly analyzeEvery: number | null = null,
  ) {}

  async insert(logs: readonly NewLog[]): Promise<void> {
    const write = () => this.db.transaction().execute((trx) => insertLogs(trx, logs));
    try {
      await write();
    } catch (err) {
      // PostgreSQL: a log of a month with no partition yet (late, or far ahead) gets one, then is written.
      if (!isMissingPartition(err)) throw err;
      await createMonthsOf(
        this.db,
        logs.map((l) => l.row.timestamp),
      );
      await write();
    }
    if (this.analyzeEvery === null) return;
    this.sinceAnalyze += logs.length;
    if (this.sinceAnalyze >= this.analyzeEvery && this.analyzing === null) {
      this.sinceAnalyze = 0;
      // In the background: the statistics may lag a batch; the writer must not wait for them.
      this.analyzing = sql`analyze logs, log_metadata, log_facets`
        .execute(this.db)
        .then(
          () => {},
          () => {},
        )
        .finally(() => (this.analyzing = null));
    }
  }

  /** Resolves when a running ANALYZE has ended. */
  async settled(): Promise<void> {
    await this.analyzing;
  }

  /** An outage when the database does not even answer. */
  async isOutage(): Promise<boolean> {
    return !(await databaseAnswers(this.db));
  }
}

const sqliteOutage = async (err: unknown) => isSqliteOutageCode((err as { code?: unknown } | null)?.code);

/** Writes on the calling thread: for in-memory SQLite databases only. */
export class SqliteInserter implements LogInserter {
  private readonly write: (logs: readonly NewLog[]) => void;

  constructor(sqlite: SQLite.Database) {
    this.write = prepareBatchWrite(sqlite);
  }

  async insert(logs: readonly NewLog[]): Promise<void> {
    this.write(logs);
  }

  isOutage = sqliteOutage;
}

class WriteError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

/** Sends each batch to a worker thread holding its own connection to the SQLite file. */
export class WorkerSqliteInserter implements LogInserter {
  private worker: Worker | null = null;
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();

  constructor(private readonly file: string) {
    // Started now, not at the first batch: a thread's start (Node, better-sqlite3, the file opened,
    // statements prepared) takes a few hundred milliseconds on a loaded machine, and the first batch
    // may be the one a shutdown writes in its last half-second.
    this.worker = this.start();
  }

  private start(): Worker {
    const worker = new Worker(new URL('./sqlite-write-worker.js', import.meta.url), {
      workerData: { path: this.file },
      // The thread's garbage is one batch at a time: a young generation of 12 MB (V8 lets it grow to
      // 48) keeps its memory down by about 10 MB under load; at 4 MB its collections cost throughput.
      resourceLimits: { maxYoungGenerationSizeMb: 12 },
    });
    worker.on('message', (reply: WriteReply) => {
      const waiter = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (this.pending.size === 0) worker.unref();
      // The batch's transaction is over: a statement waiting for the write lock may have it now.
      writeLockReleased();
      if (reply.ok) waiter?.resolve();
      else waiter?.reject(new WriteError(reply.message, reply.code));
    });
    // Idle, the thread must not keep the process alive; while a batch is out, it must (see insert).
    worker.unref();
    // A worker that died (it could not open the file, say) is an outage: the writer keeps the logs,
    // retries with backoff, and the next insert starts a new worker.
    const failAll = (message: string) => {
      if (this.worker === worker) this.worker = null;
      for (const waiter of this.pending.values()) waiter.reject(new WriteError(message, 'SQLITE_CANTOPEN'));
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

  isOutage = sqliteOutage;

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
  }
}

export function inserterFor(handle: DbHandle): LogInserter {
  if (!handle.sqlite) return new KyselyInserter(handle.db, ANALYZE_EVERY_LOGS);
  if (handle.sqlitePath === ':memory:' || handle.sqlitePath === '') return new SqliteInserter(handle.sqlite);
  return new WorkerSqliteInserter(handle.sqlitePath!);
}
