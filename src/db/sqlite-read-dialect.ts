/**
 * A Kysely dialect whose queries run on SQLite reader threads (sqlite-read-worker.ts), each with the
 * budget of the request that made it (query-budget.ts): a query past its deadline or whose client went
 * away ends its thread, and the request gets its error at once. Read-only: it takes no transactions.
 */
import { type CompiledQuery, type DatabaseConnection, type Driver, type QueryResult } from 'kysely';
import os from 'node:os';
import { type PoolThreads, WorkerPool } from '../workers/pool.js';
import { SqliteThreadDialect } from './sqlite-thread-dialect.js';
import { currentQueryBudget, queryTimeout } from './query-budget.js';
import type { ReadJob, ReadResult } from './sqlite-read-worker.js';

/** Reader threads: one per core, at most four (each holds its own page cache and memory map). */
export const SQLITE_READERS = Math.max(1, Math.min(4, os.availableParallelism()));

class ReadConnection implements DatabaseConnection {
  constructor(private readonly pool: WorkerPool<ReadJob, ReadResult>) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const budget = currentQueryBudget();
    const { rows } = await this.pool.run(
      { sql: query.sql, parameters: query.parameters },
      budget ? { deadline: budget.deadline, signal: budget.signal } : {},
    );
    return { rows: rows as R[] };
  }

  // eslint-disable-next-line require-yield -- streaming is not offered by the reader threads
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('SQLite reader threads do not stream');
  }
}

class ReadDriver implements Driver {
  private readonly connection: ReadConnection;

  constructor(private readonly pool: WorkerPool<ReadJob, ReadResult>) {
    this.connection = new ReadConnection(pool);
  }

  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    return this.connection;
  }
  async beginTransaction(): Promise<void> {
    throw new Error('SQLite reader threads take no transactions');
  }
  async commitTransaction(): Promise<void> {}
  async rollbackTransaction(): Promise<void> {}
  async releaseConnection(): Promise<void> {}
  async destroy(): Promise<void> {
    await this.pool.close();
  }
}

export class SqliteReadDialect extends SqliteThreadDialect {
  private readonly pool: WorkerPool<ReadJob, ReadResult>;

  constructor(file: string, timeoutMs: number) {
    super();
    this.pool = new WorkerPool(new URL('./sqlite-read-worker.js', import.meta.url), {
      size: SQLITE_READERS,
      workerData: { path: file },
      timeoutError: () => queryTimeout(currentQueryBudget()?.timeoutMs ?? timeoutMs),
    });
  }

  /** The reader threads at work, those ended whose statement has not stopped yet (workers/pool.ts). */
  threads(): PoolThreads {
    return this.pool.threads();
  }

  createDriver(): Driver {
    return new ReadDriver(this.pool);
  }
}
