/** Opens a SQLite connection with gatelog's settings; used by the main thread and the log-writing worker. */
import SQLite from 'better-sqlite3';

export function openSqlite(file: string): SQLite.Database {
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  // Unicode-aware lower() for case-insensitive filters (SQLite's own folds ASCII only); see dialect.ts.
  sqlite.function('gl_lower', { deterministic: true }, (value: unknown) =>
    typeof value === 'string' ? value.toLowerCase() : value,
  );
  return sqlite;
}
