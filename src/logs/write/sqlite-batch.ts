/**
 * Writing a batch of logs into SQLite through prepared statements reused across batches (a few µs per
 * row), in one transaction. Shared by the log-writing worker thread and the in-thread writer that
 * serves in-memory databases.
 */
import type SQLite from 'better-sqlite3';
import type { NewLog } from './new-log.js';
import { facetDeltas, SQLITE_FACET_UPSERT } from '../facets.js';
import { facetSourceOf, metadataRows } from '../repository.js';
import { ROLLUP_KINDS, rollupDeltas } from '../rollups/rollup-deltas.js';
import { rollupParameters, sqliteRollupUpsert } from '../rollups/rollup-writes.js';

export function prepareBatchWrite(sqlite: SQLite.Database): (logs: readonly NewLog[]) => void {
  let insertLog: SQLite.Statement | null = null;
  let columns: string[] = [];
  const insertMetadata = sqlite.prepare(
    'insert into log_metadata (log_id, organization_id, timestamp, is_test, key, value_text, value_num) values (?, ?, ?, ?, ?, ?, ?)',
  );
  const upsertFacet = sqlite.prepare(SQLITE_FACET_UPSERT);
  const upsertRollup = new Map(ROLLUP_KINDS.map((kind) => [kind, sqlite.prepare(sqliteRollupUpsert(kind))]));
  // One INSERT for the columns every log row has (built from the first row, the same for all).
  const statementFor = (log: NewLog): SQLite.Statement => {
    if (!insertLog) {
      columns = Object.keys(log.row);
      const names = columns.map((c) => `"${c}"`).join(', ');
      insertLog = sqlite.prepare(`insert into logs (${names}) values (${columns.map(() => '?').join(', ')})`);
    }
    return insertLog;
  };
  return sqlite.transaction((logs: readonly NewLog[]) => {
    const sources = logs.map((log) => {
      const statement = statementFor(log);
      const id = Number(statement.run(columns.map((c) => log.row[c as keyof typeof log.row])).lastInsertRowid);
      const metadata = metadataRows(id, log.row, log.metadata);
      for (const m of metadata) {
        insertMetadata.run(m.log_id, m.organization_id, m.timestamp, m.is_test, m.key, m.value_text, m.value_num);
      }
      return facetSourceOf(log, metadata);
    });
    for (const d of facetDeltas(sources)) {
      upsertFacet.run(d.organization_id, d.field, d.grain_ms, d.bucket_start, d.is_test, d.value_text, d.log_count);
    }
    for (const d of rollupDeltas(
      logs.map((log) => log.row),
      [],
      ROLLUP_KINDS,
      'any',
    ))
      upsertRollup.get(d.kind)!.run(rollupParameters(d));
  });
}
