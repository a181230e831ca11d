/**
 * The bulk seed's writer on SQLite (bulk-seed.ts): the log writer's own prepared statements
 * (prepareBatchWrite: logs, metadata rows, facet counts, rollups) and the scores', a batch per
 * transaction. For the build only: no flush per commit, no foreign key checks, and on a fresh store the
 * secondary indexes of the loaded tables created after the load.
 */
import type SQLite from 'better-sqlite3';
import { prepareBatchWrite } from '../src/logs/write/sqlite-batch.js';
import type { NewLog } from '../src/logs/write/new-log.js';
import { type BatchWriter, elapsed, type ScoreRow } from './bulk-seed.js';

/** The tables whose secondary indexes a fresh store builds after its load (one sort each, not a b-tree insert per row). */
const LOADED_TABLES = ['logs', 'log_metadata', 'scores'];

export function sqliteBatches(sqlite: SQLite.Database): BatchWriter {
  // A large page cache while the logs' indexes grow (this connection serves nothing meanwhile).
  sqlite.pragma('cache_size = -1048576');
  // For the build only (a bench store is rebuilt if the machine fails): no flush per commit, no foreign
  // key lookups (every log_id is one just written). Put back by finish, as sqlite-open.ts sets them.
  sqlite.pragma('synchronous = OFF');
  sqlite.pragma('foreign_keys = OFF');
  // A fresh store: the secondary indexes (not those behind unique keys, which have no sql) dropped now
  // and created after the load.
  const empty = sqlite.prepare('select count(*) from logs').pluck().get() === 0;
  const indexes = empty
    ? (sqlite
        .prepare(
          `select name, sql from sqlite_master where type = 'index' and sql is not null
           and tbl_name in (${LOADED_TABLES.map(() => '?').join(', ')})`,
        )
        .all(...LOADED_TABLES) as { name: string; sql: string }[])
    : [];
  for (const index of indexes) sqlite.exec(`drop index "${index.name}"`);
  const write = prepareBatchWrite(sqlite);
  const insertScore = sqlite.prepare(
    'insert into scores (id, organization_id, log_id, evaluator_id, numerical_value, boolean_value, score_value, created_at) values (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const maxId = sqlite.prepare('select coalesce(max(id), 0) as id from logs').pluck();
  const batch = sqlite.transaction((logs: NewLog[], scoresOf: (ids: number[]) => ScoreRow[]) => {
    // One writer, nothing deleted: the batch's logs take the ids after the highest (checked below).
    const first = Number(maxId.get()) + 1;
    write(logs);
    const last = Number(maxId.get());
    if (last !== first + logs.length - 1) throw new Error(`ids ${first}..${last} for ${logs.length} logs`);
    for (const s of scoresOf(logs.map((_, k) => first + k))) {
      insertScore.run(
        s.id,
        s.organization_id,
        s.log_id,
        s.evaluator_id,
        s.numerical_value,
        s.boolean_value,
        s.score_value,
        s.created_at,
      );
    }
  });
  return {
    write: async (logs, scoresOf) => batch(logs, scoresOf),
    finish: async () => {
      const started = performance.now();
      for (const index of indexes) sqlite.exec(index.sql);
      if (indexes.length > 0) console.log(`${indexes.length} indexes created after the load: ${elapsed(started)} s`);
      sqlite.pragma('foreign_keys = ON');
      sqlite.pragma('synchronous = NORMAL');
    },
  };
}
