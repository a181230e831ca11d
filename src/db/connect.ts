/** Builds a Kysely instance for the configured database; the only place that knows both drivers. */
import fs from 'node:fs';
import path from 'node:path';
import type SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { DatabaseTarget } from '../config.js';
import type { Database } from './schema.js';
import { budgetedReadPool } from './pg-read-pool.js';
import type { PoolThreads } from '../workers/pool.js';
import { ImmediateSqliteDialect, MAIN_BUSY_TIMEOUT_MS } from './sqlite-dialect.js';
import { SqliteBulkDialect } from './sqlite-bulk-dialect.js';
import { SqliteReadDialect } from './sqlite-read-dialect.js';
import { openSqlite } from './sqlite-open.js';

export type DialectName = 'sqlite' | 'postgres';

export interface DbHandle {
  /** Authentication, ingestion, single-log reads and writes, /health: short indexed queries. */
  readonly db: Kysely<Database>;
  /**
   * List queries and filter options: on SQLite reader threads, on PostgreSQL a pool of their own; each
   * query bounded by the calling request's budget (query-budget.ts). Read-only.
   */
  readonly reader: Kysely<Database>;
  /**
   * Reads as `reader`'s (budgeted, a pool of their own), always on the primary: those whose user expects
   * their own writes (a dataset's logs: the dataset's row, its count and revision, come from the primary).
   * The same as `reader` without a read replica (GATELOG_DATABASE_READ_URL) and on SQLite.
   */
  readonly freshReader: Kysely<Database>;
  /**
   * Writes of many rows in one transaction (copying logs into a dataset): on SQLite a thread of their
   * own, so the event loop keeps serving while they run; on PostgreSQL the main pool.
   */
  readonly bulk: Kysely<Database>;
  /**
   * A call's admission (budgets' reservations, rate-limit draws): holds that matter only while their call
   * runs, on one hot row per budget and per limit. On PostgreSQL a pool whose commits do not wait for the
   * WAL's flush to disk (synchronous_commit off): a row's lock is released at commit, so calls on one
   * budget follow each other at the CPU's pace, not the disk's. On SQLite the main connection.
   */
  readonly holds: Kysely<Database>;
  readonly dialect: DialectName;
  /** The SQLite connection itself, for the log writer's prepared-statement fast path; null on PostgreSQL. */
  readonly sqlite: SQLite.Database | null;
  /** The SQLite file (or ":memory:"); null on PostgreSQL. */
  readonly sqlitePath: string | null;
  /** The PostgreSQL connection string (for the log writer's thread); null on SQLite. */
  readonly postgresUrl: string | null;
  /** GATELOG_DATABASE_READ_URL, the replica `reader` reads from, and whether it answers; null without one. */
  readonly readReplica: ReadReplica | null;
  /**
   * SQLite's reader threads: those given a query, those ended (their request's budget ran out or its
   * client went away) that have not exited, and those running a statement (workers/pool.ts). null on
   * PostgreSQL and in memory.
   */
  readerThreads(): PoolThreads | null;
  /** Closes them all. */
  close(): Promise<void>;
}

export interface ReadReplica {
  readonly url: string;
  /** `select 1` on a connection of its own, within REPLICA_PROBE_MS: never behind the lists' pool. */
  answers(): Promise<boolean>;
}

export interface ConnectOptions {
  /** GATELOG_QUERY_TIMEOUT_MS: the default budget of a read query. */
  queryTimeoutMs?: number;
  /**
   * Processes of one `serve` sharing the machine (GATELOG_WORKERS), each opening its own pools: on
   * PostgreSQL each pool is that share of one process's (at least a floor), so that a server on many
   * cores does not open many times the connections of one process. Default 1.
   */
  processes?: number;
}

/** Connections of the PostgreSQL main pool (of one process; shared by workers: poolShare). */
const PG_MAIN_CONNECTIONS = 10;
/** Connections of the PostgreSQL read pool: lists can never take more, nor the main pool's. */
const PG_READ_CONNECTIONS = 5;
/** Connections of the PostgreSQL pool of admission's holds: one statement per proxied call. */
const PG_HOLD_CONNECTIONS = 4;

/**
 * A worker's share of a pool of one process's `size`, never below `floor`: 2 workers keep about one
 * process's connections, 8 use about 2.5 times as many (48 in all), each with enough for its own work.
 */
function poolShare(size: number, processes: number, floor: number): number {
  return Math.max(floor, Math.ceil(size / processes));
}
/** The longest /health waits for a read replica (connecting, then answering) before calling it unreachable. */
const REPLICA_PROBE_MS = 2000;
/** The main pool's statement_timeout: its queries are short; one stuck this long is a fault. */
const PG_MAIN_STATEMENT_TIMEOUT_MS = 60_000;

/**
 * A pool of `max` connections with these session settings, and no JIT: compiling a plan costs ~100 ms,
 * more than it saves on gatelog's short queries. A client losing its connection must not crash the
 * process; the next query on it reports it. The pool's 'error' covers idle clients only: one checked
 * out between two statements of a transaction (the server restarted, or its sessions were terminated)
 * emits on itself.
 */
function pgPool(url: string, max: number, settings: string, config: pg.PoolConfig = {}): pg.Pool {
  const pool = new pg.Pool({ ...config, connectionString: url, max, options: `-c jit=off ${settings}` });
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/** A pool of `max` connections set as the main pool is: the main pool, and the log writer's thread's. */
export function mainPool(url: string, max: number): pg.Pool {
  return pgPool(url, max, `-c statement_timeout=${PG_MAIN_STATEMENT_TIMEOUT_MS}`);
}

/**
 * A read pool's connections: the server's own limit backs up the client's cancel (a second later, in
 * case it never arrives).
 */
function readPool(url: string, max: number, queryTimeoutMs: number): pg.Pool {
  return pgPool(url, max, `-c statement_timeout=${queryTimeoutMs + 1000}`);
}

// int8 (bigint) columns hold epoch milliseconds and counts: all far below 2^53, so numbers are exact.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number.parseFloat(v));

export function connect(target: DatabaseTarget, options: ConnectOptions = {}): DbHandle {
  const queryTimeoutMs = options.queryTimeoutMs ?? 30_000;
  const processes = options.processes ?? 1;
  if (target.kind === 'postgres') {
    const pool = mainPool(target.url, poolShare(PG_MAIN_CONNECTIONS, processes, 3));
    const readers = poolShare(PG_READ_CONNECTIONS, processes, 2);
    // The primary's read pool: every list's without a replica, the fresh reads' with one.
    const primaryReads = budgetedReadPool(readPool(target.url, readers, queryTimeoutMs), pool, queryTimeoutMs);
    // A replica's statements are cancelled on the replica (a backend's pid means nothing on another
    // server), by a connection of their own there: the read pool's may all be busy with the statements.
    // /health asks it whether the replica answers, bounded in time: a replica gone quiet must not hang it.
    const replicaSide =
      target.readUrl === undefined
        ? null
        : pgPool(target.readUrl, 1, `-c statement_timeout=${REPLICA_PROBE_MS}`, {
            connectionTimeoutMillis: REPLICA_PROBE_MS,
            query_timeout: REPLICA_PROBE_MS,
          });
    const replicaReads =
      target.readUrl === undefined || replicaSide === null
        ? null
        : budgetedReadPool(readPool(target.readUrl, readers, queryTimeoutMs), replicaSide, queryTimeoutMs, true);
    // Admission's holds: a crash of the database itself may forget the last moment's (docs/decisions.md).
    const holdPool = pgPool(
      target.url,
      poolShare(PG_HOLD_CONNECTIONS, processes, 1),
      `-c statement_timeout=${PG_MAIN_STATEMENT_TIMEOUT_MS} -c synchronous_commit=off`,
    );
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    const freshReader = new Kysely<Database>({ dialect: new PostgresDialect({ pool: primaryReads }) });
    const reader = replicaReads
      ? new Kysely<Database>({ dialect: new PostgresDialect({ pool: replicaReads }) })
      : freshReader;
    const holds = new Kysely<Database>({ dialect: new PostgresDialect({ pool: holdPool }) });
    return {
      db,
      reader,
      freshReader,
      bulk: db,
      holds,
      dialect: 'postgres',
      sqlite: null,
      sqlitePath: null,
      postgresUrl: target.url,
      readReplica:
        target.readUrl === undefined || replicaSide === null
          ? null
          : {
              url: target.readUrl,
              answers: () =>
                replicaSide.query('select 1').then(
                  () => true,
                  () => false,
                ),
            },
      readerThreads: () => null,
      close: () => closeAll(db, reader, freshReader, holds),
    };
  }
  if (target.path !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(target.path)), { recursive: true });
  const sqlite = openSqlite(target.path, 'reader', MAIN_BUSY_TIMEOUT_MS);
  const db = new Kysely<Database>({ dialect: new ImmediateSqliteDialect({ database: sqlite }) });
  // An in-memory database cannot be opened by another thread: its reads stay on this connection.
  const memory = target.path === ':memory:';
  const readDialect = memory ? null : new SqliteReadDialect(target.path, queryTimeoutMs);
  const reader = readDialect ? new Kysely<Database>({ dialect: readDialect }) : db;
  const bulk = memory ? db : new Kysely<Database>({ dialect: new SqliteBulkDialect(target.path) });
  return {
    db,
    reader,
    freshReader: reader,
    bulk,
    holds: db,
    dialect: 'sqlite',
    sqlite,
    sqlitePath: target.path,
    postgresUrl: null,
    readReplica: null,
    readerThreads: () => readDialect?.threads() ?? null,
    close: () => closeAll(db, reader, bulk),
  };
}

async function closeAll(db: Kysely<Database>, ...others: Kysely<Database>[]): Promise<void> {
  for (const other of new Set(others)) if (other !== db) await other.destroy();
  await db.destroy();
}
