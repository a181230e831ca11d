/**
 * How the log writer stores a batch: atomically, in one transaction. On SQLite, which runs on the
 * event loop's thread, the batch goes through prepared statements reused across batches (a few µs per
 * row) so that writing never stalls request handling; PostgreSQL takes multi-row INSERTs through
 * Kysely.
 */
import type SQLite from 'better-sqlite3';
import { type Kysely, sql } from 'kysely';
import type { DbHandle } from '../db/connect.js';
import type { Database } from '../db/schema.js';
import type { NewLog } from './new-log.js';
import { insertLogs, metadataRows } from './repository.js';

export interface LogInserter {
  insert(logs: readonly NewLog[]): Promise<void>;
  /** Whether a failed insert means the store is unavailable (retry later) rather than a bad row. */
  isOutage(err: unknown): Promise<boolean>;
}

export class KyselyInserter implements LogInserter {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(logs: readonly NewLog[]): Promise<void> {
    await this.db.transaction().execute((trx) => insertLogs(trx, logs));
  }

  /** An outage when the database does not even answer `select 1`. */
  async isOutage(): Promise<boolean> {
    try {
      await sql`select 1`.execute(this.db);
      return false;
    } catch {
      return true;
    }
  }
}

/** SQLite errors that say the file is unavailable for now (locked, full, unreadable), not that a row is bad. */
const SQLITE_OUTAGE = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|CANTOPEN|READONLY|NOMEM|PROTOCOL)/;

export class SqliteInserter implements LogInserter {
  private insertLog: SQLite.Statement | null = null;
  private columns: string[] = [];
  private readonly insertMetadata: SQLite.Statement;
  private readonly write: (logs: readonly NewLog[]) => void;

  constructor(private readonly sqlite: SQLite.Database) {
    this.insertMetadata = sqlite.prepare(
      'insert into log_metadata (log_id, organization_id, timestamp, key, value_text, value_num) values (?, ?, ?, ?, ?, ?)',
    );
    this.write = sqlite.transaction((logs: readonly NewLog[]) => {
      for (const log of logs) {
        const id = Number(
          this.statementFor(log).run(this.columns.map((c) => log.row[c as keyof typeof log.row])).lastInsertRowid,
        );
        for (const m of metadataRows(id, log.row.organization_id, log.row.timestamp, log.metadata)) {
          this.insertMetadata.run(m.log_id, m.organization_id, m.timestamp, m.key, m.value_text, m.value_num);
        }
      }
    });
  }

  /** One INSERT for the columns every log row has (built from the first row, the same for all). */
  private statementFor(log: NewLog): SQLite.Statement {
    if (!this.insertLog) {
      this.columns = Object.keys(log.row);
      const names = this.columns.map((c) => `"${c}"`).join(', ');
      this.insertLog = this.sqlite.prepare(
        `insert into logs (${names}) values (${this.columns.map(() => '?').join(', ')})`,
      );
    }
    return this.insertLog;
  }

  async insert(logs: readonly NewLog[]): Promise<void> {
    this.write(logs);
  }

  async isOutage(err: unknown): Promise<boolean> {
    return SQLITE_OUTAGE.test(String((err as { code?: unknown } | null)?.code ?? ''));
  }
}

export function inserterFor(handle: DbHandle): LogInserter {
  return handle.sqlite ? new SqliteInserter(handle.sqlite) : new KyselyInserter(handle.db);
}
