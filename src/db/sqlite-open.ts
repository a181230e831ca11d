/** Opens a SQLite connection with gatelog's settings; used by the main thread and the log-writing worker. */
import fs from 'node:fs';
import SQLite from 'better-sqlite3';
import { registerGroupTally } from './sqlite-aggregates/group-tally.js';
import { registerFacetTally } from './sqlite-aggregates/facet-tally.js';
import { registerCellsAggregate } from './sqlite-aggregates/cells-aggregate.js';
import { registerSketchSum } from './sqlite-aggregates/sketch-sum.js';
import { STOP_POINT } from './stop-point.js';
import { mergeEncoded } from '../logs/rollups/sketch.js';

/**
 * A new database file is created readable by its owner only (0600): it holds every prompt and answer.
 * SQLite gives its -wal and -shm files the database file's mode.
 */
function createPrivately(file: string): void {
  if (file === ':memory:' || file === '') return;
  try {
    fs.closeSync(fs.openSync(file, 'wx', 0o600));
  } catch {
    // It exists (its mode is the owner's choice), or it cannot be created: SQLite says why below.
  }
}

/**
 * `reader` serves requests (list queries read much of a large file); `writer` is the log-writing
 * thread's connection, which only appends and keeps a small cache so it adds little memory.
 */
export function openSqlite(file: string, role: 'reader' | 'writer' = 'reader', busyTimeoutMs = 5000): SQLite.Database {
  createPrivately(file);
  const sqlite = new SQLite(file);
  // A new file gives back the pages of deleted rows (the retention sweep runs incremental_vacuum); an
  // older one keeps its mode until `gatelog db vacuum` converts it. Only possible before any table exists.
  if (sqlite.pragma('page_count', { simple: true }) === 0) sqlite.pragma('auto_vacuum = INCREMENTAL');
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  // A worker thread may wait for the write lock; the main thread must not (sqlite-dialect.ts).
  sqlite.pragma(`busy_timeout = ${busyTimeoutMs}`);
  sqlite.pragma('foreign_keys = ON');
  // Reads through a memory map (no read() call and copy per page) and a larger page cache: list queries
  // over a large log table do many B-tree lookups, and these roughly halve their time (bench/README.md).
  if (role === 'reader') {
    sqlite.pragma('mmap_size = 1073741824');
    sqlite.pragma('cache_size = -32768');
  } else {
    sqlite.pragma('cache_size = -8192');
    // Checkpoint every 8,000 WAL pages (32 MB) rather than SQLite's 1,000: appends touch the same tail
    // pages of the table and its indexes batch after batch, and a rarer checkpoint copies each such page
    // once instead of again and again: about a fifth less time per log written (bench/README.md).
    sqlite.pragma('wal_autocheckpoint = 8000');
  }
  // Unicode-aware lower() for case-insensitive filters (SQLite's own folds ASCII only); see dialect.ts.
  sqlite.function('gl_lower', { deterministic: true }, (value: unknown) =>
    typeof value === 'string' ? value.toLowerCase() : value,
  );
  // Two rollup sketches as one, in the rollups' upsert (PostgreSQL has a function of the same name).
  sqlite.function('gatelog_sketch_merge', { deterministic: true }, (a: unknown, b: unknown) =>
    mergeEncoded(a as string | null, b as string | null),
  );
  // A group's rollup sketches merged in its summary's GROUP BY (sqlite-aggregates/sketch-sum.ts).
  registerSketchSum(sqlite);
  // A point in a long statement where ending its thread takes effect (docs/decisions.md "Search:
  // bounded terms"): SQLite cannot be interrupted from outside in this build, but a thread told to end
  // (workers/pool.ts, past the query budget) stops at its next call into JavaScript, and this is one.
  // Not deterministic, so that SQLite calls it for every row rather than once.
  sqlite.function(STOP_POINT, () => 1);
  // The summary's one-read aggregate, counts by group without a sort, and the facet counts' one-read
  // aggregate (sqlite-aggregates/: cells-aggregate.ts, group-tally.ts, facet-tally.ts).
  registerCellsAggregate(sqlite);
  registerGroupTally(sqlite);
  registerFacetTally(sqlite);
  return sqlite;
}
