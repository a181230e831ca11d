/**
 * A store of hot writes (budgets' ledger, rate-limit buckets) with two ways to its tables: on SQLite,
 * statements prepared once on the main connection, run when it is not busy (whenNotBusy); on PostgreSQL,
 * SQL through Kysely. The store's methods ask `onSqlite` first and write through `db` when it is null.
 */
import type SQLite from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { DbHandle } from './connect.js';
import type { Database } from './schema.js';
import { whenNotBusy } from './sqlite-dialect.js';

export abstract class SqliteFastPath<Prepared> {
  protected readonly db: Kysely<Database>;
  /** On SQLite, the store's statements prepared on the main connection; null on PostgreSQL. */
  private readonly prepared: Prepared | null;

  constructor(handle: Pick<DbHandle, 'db' | 'sqlite'>, prepare: (sqlite: SQLite.Database) => Prepared) {
    this.db = handle.db;
    this.prepared = handle.sqlite === null ? null : prepare(handle.sqlite);
  }

  /** On SQLite, `run` with the prepared statements once the main connection is not busy; else null. */
  protected onSqlite<T>(run: (prepared: Prepared) => T | Promise<T>): Promise<T> | null {
    const prepared = this.prepared;
    return prepared === null ? null : whenNotBusy(() => run(prepared));
  }
}
