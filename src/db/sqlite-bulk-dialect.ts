/**
 * A Kysely dialect whose queries and transactions run on the SQLite bulk-write thread
 * (sqlite-bulk-worker.ts). One connection, taken by one transaction at a time; transactions begin
 * IMMEDIATE like the main connection's (sqlite-dialect.ts).
 */
import { CompiledQuery, type DatabaseConnection, type Driver, type QueryResult } from 'kysely';
import { AppError } from '../errors.js';
import { WorkerPool } from '../workers/pool.js';
import { SqliteThreadDialect } from './sqlite-thread-dialect.js';
import { rollbackIfActive } from './sqlite-dialect.js';
import type { BulkJob, BulkResult } from './sqlite-bulk-worker.js';
import { writeLockReleased } from './sqlite-write-lock.js';

class BulkConnection implements DatabaseConnection {
  constructor(private readonly pool: WorkerPool<BulkJob, BulkResult>) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.pool.run({ sql: query.sql, parameters: query.parameters }).finally(writeLockReleased);
    return {
      rows: result.rows as R[],
      numAffectedRows: BigInt(result.changes),
      insertId: BigInt(result.lastInsertRowid),
    };
  }

  // eslint-disable-next-line require-yield -- streaming is not offered by the bulk thread
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('the SQLite bulk thread does not stream');
  }
}

class BulkDriver implements Driver {
  private readonly connection: BulkConnection;
  /** Resolves when the connection is free; each acquirer chains its release onto it. */
  private free: Promise<void> = Promise.resolve();
  private release: (() => void) | null = null;

  constructor(private readonly pool: WorkerPool<BulkJob, BulkResult>) {
    this.connection = new BulkConnection(pool);
  }

  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    const previous = this.free;
    let release!: () => void;
    this.free = new Promise((resolve) => (release = resolve));
    await previous;
    this.release = release;
    return this.connection;
  }
  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await rollbackIfActive(connection);
  }
  async releaseConnection(): Promise<void> {
    const release = this.release;
    this.release = null;
    release?.();
  }
  async destroy(): Promise<void> {
    await this.pool.close();
  }
}

export class SqliteBulkDialect extends SqliteThreadDialect {
  private readonly pool: WorkerPool<BulkJob, BulkResult>;

  constructor(file: string) {
    super();
    this.pool = new WorkerPool(new URL('./sqlite-bulk-worker.js', import.meta.url), {
      size: 1,
      workerData: { path: file },
      // Bulk writes are given no deadline: a transaction is never cut short halfway.
      timeoutError: () => new AppError(503, 'query_timeout', 'The write took too long.'),
    });
  }

  createDriver(): Driver {
    return new BulkDriver(this.pool);
  }
}
