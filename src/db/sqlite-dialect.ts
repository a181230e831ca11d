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
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
} from 'kysely';

class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

export class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly settings: SqliteDialectConfig) {
    super(settings);
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.settings);
  }
}

/** SQLite's and PostgreSQL's ways of saying "busy, try again": the request gets a 503 with Retry-After. */
export function isBusy(err: unknown): boolean {
  const code = String((err as { code?: unknown } | null)?.code ?? '');
  return (
    code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') || ['55P03', '40001', '40P01'].includes(code)
  );
}
