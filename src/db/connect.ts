/** Builds a Kysely instance for the configured database; the only place that knows both drivers. */
import fs from 'node:fs';
import path from 'node:path';
import type SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import type { DatabaseTarget } from '../config.js';
import type { Database } from './schema.js';
import { openSqlite } from './sqlite-open.js';

export type DialectName = 'sqlite' | 'postgres';

export interface DbHandle {
  readonly db: Kysely<Database>;
  readonly dialect: DialectName;
  /** The SQLite connection itself, for the log writer's prepared-statement fast path; null on PostgreSQL. */
  readonly sqlite: SQLite.Database | null;
  /** The SQLite file (or ":memory:"); null on PostgreSQL. */
  readonly sqlitePath: string | null;
}

// int8 (bigint) columns hold epoch milliseconds and counts: all far below 2^53, so numbers are exact.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number.parseFloat(v));

export function connect(target: DatabaseTarget): DbHandle {
  if (target.kind === 'postgres') {
    // No JIT: compiling a plan costs ~100 ms, more than it saves on gatelog's short queries.
    const pool = new pg.Pool({ connectionString: target.url, max: 10, options: '-c jit=off' });
    // An idle client losing its connection must not crash the process; the next query reports it.
    pool.on('error', () => {});
    return {
      db: new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }),
      dialect: 'postgres',
      sqlite: null,
      sqlitePath: null,
    };
  }
  if (target.path !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(target.path)), { recursive: true });
  const sqlite = openSqlite(target.path);
  return {
    db: new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) }),
    dialect: 'sqlite',
    sqlite,
    sqlitePath: target.path,
  };
}
