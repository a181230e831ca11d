/**
 * The seed of a large bench store (10M logs over 30 days), written in large batches: the same logs and
 * scores as seedLogs (seedGenerator), with the metadata rows, facet counts and rollups gatelog writes
 * beside them — counted per batch (facetDeltas, rollupDeltas: a batch of tens of thousands of logs in
 * time order adds up to few rows) and upserted, so buckets a batch boundary splits are summed right.
 *
 * SQLite: the log writer's own prepared statements (prepareBatchWrite), a batch per transaction.
 * PostgreSQL: each table's rows as one JSON parameter expanded by json_populate_recordset — one
 * statement per table and batch, no new package — ids taken from the logs' sequence beforehand.
 */
import crypto from 'node:crypto';
import { CompiledQuery, type Kysely, type Transaction } from 'kysely';
import type { KeyIdentity } from '../src/auth/authenticator.js';
import type { DbHandle } from '../src/db/connect.js';
import type { Database } from '../src/db/schema.js';
import { FACET_CONFLICT, facetDeltas, type FacetSource } from '../src/logs/facets.js';
import { facetSourceOf, metadataRows } from '../src/logs/repository.js';
import { deltaRow, ROLLUP_KINDS, rollupDeltas } from '../src/logs/rollups/rollup-deltas.js';
import { rollupConflict } from '../src/logs/rollups/rollup-writes.js';
import { prepareBatchWrite } from '../src/logs/write/sqlite-batch.js';
import type { NewLog } from '../src/logs/write/new-log.js';
import { SEED_CHUNK, seedGenerator } from './seed-logs.js';

/** Logs per batch (one transaction): whole chunks of the seed. */
const BATCH = 4 * SEED_CHUNK;

/** A score drawn for the batch's `index`-th log. */
interface DrawnScore {
  index: number;
  evaluatorId: string;
  numerical: number;
  value: number;
}

interface ScoreRow {
  id: string;
  organization_id: string;
  log_id: number;
  evaluator_id: string;
  numerical_value: number;
  boolean_value: null;
  score_value: number;
  created_at: number;
}

export async function bulkSeedLogs(
  handle: DbHandle,
  auth: KeyIdentity,
  testAuth: KeyIdentity,
  evaluatorIds: string[],
  rows: number,
  now: number,
  days: number,
  onProgress: (done: number) => void,
): Promise<void> {
  const seed = seedGenerator(auth, testAuth, evaluatorIds, rows, now, days);
  const writeBatch = handle.sqlite ? sqliteBatches(handle) : postgresBatches(handle.db);
  for (let done = 0; done < rows; done += BATCH) {
    const logs: NewLog[] = [];
    const drawn: DrawnScore[] = [];
    // Chunk by chunk, each chunk's scores drawn after its logs, as seedLogs draws them.
    for (let from = done; from < Math.min(rows, done + BATCH); from += SEED_CHUNK) {
      const chunk = seed.logs(from, from + SEED_CHUNK);
      for (const k of seed.scored(chunk.map((_, k) => k))) drawn.push({ index: logs.length + k, ...seed.score() });
      logs.push(...chunk);
    }
    // The scores once the batch's logs have their ids (in the batch's order).
    const scoresOf = (ids: number[]): ScoreRow[] =>
      drawn.map((s) => ({
        id: crypto.randomUUID(),
        organization_id: auth.organizationId,
        log_id: ids[s.index],
        evaluator_id: s.evaluatorId,
        numerical_value: s.numerical,
        boolean_value: null,
        score_value: s.value,
        created_at: now,
      }));
    await writeBatch(logs, scoresOf);
    onProgress(Math.min(rows, done + BATCH));
  }
}

type BatchWriter = (logs: NewLog[], scoresOf: (ids: number[]) => ScoreRow[]) => Promise<void>;

function sqliteBatches(handle: DbHandle): BatchWriter {
  const sqlite = handle.sqlite!;
  // A large page cache while the logs' indexes grow (this connection serves nothing meanwhile).
  sqlite.pragma('cache_size = -1048576');
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
  return async (logs, scoresOf) => batch(logs, scoresOf);
}

/** `insert into table (columns) select columns from json_populate_recordset(null::table, $1)`, then `tail`. */
function jsonInsert(table: string, columns: readonly string[], rows: readonly object[], tail = ''): CompiledQuery {
  const names = columns.map((c) => `"${c}"`).join(', ');
  return CompiledQuery.raw(
    `insert into ${table} (${names}) select ${names} from json_populate_recordset(null::${table}, $1::json) ${tail}`,
    [JSON.stringify(rows)],
  );
}

function postgresBatches(db: Kysely<Database>): BatchWriter {
  return (logs, scoresOf) =>
    db.transaction().execute(async (trx: Transaction<Database>) => {
      // A bench store rebuilt if the machine fails: no need to wait for each commit's flush.
      await trx.executeQuery(CompiledQuery.raw('set local synchronous_commit = off'));
      const { rows: taken } = await trx.executeQuery<{ id: number }>(
        CompiledQuery.raw(`select nextval(pg_get_serial_sequence('logs', 'id')) as id from generate_series(1, $1)`, [
          logs.length,
        ]),
      );
      const ids = taken.map((r) => Number(r.id)).sort((a, b) => a - b);
      const logRows = logs.map((l, k) => ({ id: ids[k], ...l.row }));
      await trx.executeQuery(jsonInsert('logs', Object.keys(logRows[0]), logRows));
      const sources: FacetSource[] = [];
      const metadata = logs.flatMap((l, k) => {
        const rows = metadataRows(ids[k], l.row, l.metadata);
        sources.push(facetSourceOf(l, rows));
        return rows;
      });
      if (metadata.length > 0) await trx.executeQuery(jsonInsert('log_metadata', Object.keys(metadata[0]), metadata));
      const scores = scoresOf(ids);
      if (scores.length > 0) await trx.executeQuery(jsonInsert('scores', Object.keys(scores[0]), scores));
      const facets = facetDeltas(sources);
      await trx.executeQuery(jsonInsert('log_facets', Object.keys(facets[0]), facets, FACET_CONFLICT));
      const rollups = rollupDeltas(logs.map((l) => l.row));
      for (const kind of ROLLUP_KINDS) {
        const rows = rollups.filter((d) => d.kind === kind).map(deltaRow);
        if (rows.length === 0) continue;
        await trx.executeQuery(
          jsonInsert(kind.table, [...kind.keyColumns, ...kind.valueColumns], rows, rollupConflict(kind)),
        );
      }
    });
}
