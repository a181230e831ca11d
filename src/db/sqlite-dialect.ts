/**
 * The main SQLite connection's dialect: Kysely's, with transactions that begin IMMEDIATE. A deferred
 * transaction that reads and then writes cannot wait for the write lock — if the log writer committed
 * since its read, SQLite fails it at once with "database is locked" (a DELETE during ingestion did, 66
 * times in 3,237). Taking the lock at BEGIN lets the busy timeout do its work.
 */
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  SqliteAdapter,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
} from 'kysely';
import { releasedOrAfter } from './sqlite-write-lock.js';

/** How long the main connection waits for the write lock in all, retrying without blocking. */
const BUSY_WAIT_MS = 5000;

/**
 * The main connection is synchronous: SQLite's own busy timeout would wait for the write lock with the
 * event loop blocked. A worker thread's transaction that holds the lock needs the event loop to go on
 * (its next query and its commit come from here), so that wait could only end at the timeout — five
 * seconds of a frozen service and a 503 (found by the dataset fuzz: six dataset writes at once). The main
 * connection therefore has no busy timeout (MAIN_BUSY_TIMEOUT_MS), and a statement that finds the database
 * busy is retried here, the event loop free between tries, until BUSY_WAIT_MS have passed. Even a 10 ms
 * busy timeout froze the event loop each time the log writer met the retention sweep's batch (proxied p99
 * +3.4 ms while 1M expired logs were swept).
 * A retried statement is a whole one: BEGIN IMMEDIATE, an autocommit write, or a COMMIT (which SQLite
 * allows to be retried after SQLITE_BUSY). A pause ends early when a connection of this process releases
 * the lock (sqlite-write-lock.ts).
 */
export const MAIN_BUSY_TIMEOUT_MS = 0;

/**
 * Runs a whole statement (or transaction) on the main connection, again while SQLite finds the database
 * busy, the event loop free between tries, for BUSY_WAIT_MS in all (see MAIN_BUSY_TIMEOUT_MS).
 */
export async function whenNotBusy<T>(run: () => T | Promise<T>): Promise<T> {
  const giveUpAt = performance.now() + BUSY_WAIT_MS;
  for (let pause = 1; ; pause = Math.min(pause * 2, 50)) {
    try {
      return await run();
    } catch (err) {
      if (!String((err as { code?: unknown }).code ?? '').startsWith('SQLITE_BUSY')) throw err;
      if (performance.now() + pause > giveUpAt) throw err;
      await releasedOrAfter(pause);
    }
  }
}

class PatientConnection implements DatabaseConnection {
  constructor(private readonly inner: DatabaseConnection) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return whenNotBusy(() => this.inner.executeQuery<R>(query));
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  override async acquireConnection(): Promise<DatabaseConnection> {
    return new PatientConnection(await super.acquireConnection());
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await rollbackIfActive(connection);
  }
}

/**
 * Rolls back, unless SQLite already did: after a full disk, an I/O error or running out of memory it
 * may end the transaction itself, and the "no transaction is active" of a second rollback would hide
 * the error that matters from the caller.
 */
export async function rollbackIfActive(connection: DatabaseConnection): Promise<void> {
  try {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  } catch (err) {
    if (!/no transaction is active/.test(String((err as { message?: unknown }).message))) throw err;
  }
}

/**
 * SQLite's schema changes are transactional, which Kysely's adapter does not claim: so told, its migrator
 * runs the pending migrations and their record in one transaction, and an upgrade stopped halfway (a
 * crash, a kill during a long index build) leaves the database as it was, not half migrated with a
 * migration that cannot run again.
 */
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

export class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly settings: SqliteDialectConfig) {
    super(settings);
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.settings);
  }

  override createAdapter(): SqliteAdapter {
    return new TransactionalDdlSqliteAdapter();
  }
}

/** SQLite's and PostgreSQL's ways of saying "busy, try again": the request gets a 503 with Retry-After. */
export function isBusy(err: unknown): boolean {
  const code = String((err as { code?: unknown } | null)?.code ?? '');
  return (
    code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') || ['55P03', '40001', '40P01'].includes(code)
  );
}

/**
 * Runs `run` (prepared statements of its own transaction) on the main connection only when no other
 * transaction is open on it: one open there (Kysely's, between two of its statements) would take these
 * statements into itself as a savepoint. They wait for it to end instead, as for another's lock: the
 * SQLITE_BUSY thrown here is retried by whenNotBusy.
 */
export function outsideTransactions<T>(sqlite: { inTransaction: boolean }, run: () => T): T {
  if (sqlite.inTransaction) throw Object.assign(new Error('a transaction is open'), { code: 'SQLITE_BUSY' });
  return run();
}
