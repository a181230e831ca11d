/**
 * How the log writer stores a batch: atomically, in one transaction. SQLite files and PostgreSQL are
 * written by a worker thread of their own (thread-inserter.ts) so that writing never stalls request
 * handling; an in-memory SQLite database, which another thread cannot open, is written in-thread.
 * PostgreSQL takes multi-row INSERTs (KyselyInserter, run on that thread).
 */
import type SQLite from 'better-sqlite3';
import { type Kysely, sql } from 'kysely';
import { databaseAnswers } from '../../db/answers.js';
import type { DbHandle } from '../../db/connect.js';
import type { Database } from '../../db/schema.js';
import type { NewLog } from './new-log.js';
import type { LogInserter } from './log-inserter.js';
import { insertLogs } from '../repository.js';
import { createMonthsOf, isMissingPartition } from '../../db/log-partitions.js';
import { isSqliteOutageCode } from '../../db/unavailable.js';
import { writeLockReleased } from '../../db/sqlite-write-lock.js';
import { prepareBatchWrite } from './sqlite-batch.js';
import { ThreadInserter } from './thread-inserter.js';

export type { LogInserter } from './log-inserter.js';

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

/** The fastest way the database offers: a thread of its own, but for in-memory SQLite. */
export function inserterFor(handle: DbHandle): LogInserter {
  if (!handle.sqlite) {
    const db = handle.db;
    return new ThreadInserter({
      script: new URL('./pg-write-worker.js', import.meta.url),
      workerData: { url: handle.postgresUrl },
      deathCode: 'GATELOG_WRITER_THREAD',
      isOutage: async () => !(await databaseAnswers(db)),
    });
  }
  if (handle.sqlitePath === ':memory:' || handle.sqlitePath === '') return new SqliteInserter(handle.sqlite);
  return new ThreadInserter({
    script: new URL('./sqlite-write-worker.js', import.meta.url),
    workerData: { path: handle.sqlitePath },
    deathCode: 'SQLITE_CANTOPEN',
    isOutage: sqliteOutage,
    // The batch's transaction is over: a statement waiting for the write lock may have it now.
    onReply: writeLockReleased,
  });
}
