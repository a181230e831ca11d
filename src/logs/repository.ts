/** Reads and writes of stored logs. Every query is scoped by organization here, never by a caller. */
import type { Kysely, Transaction } from 'kysely';
import type { Database, LogUpdate, StoredLog } from '../db/schema.js';
import { applyFacetDeltas, type FacetSource, facetDeltas } from './facets.js';
import { metadataNumber, metadataText } from '../db/metadata-values.js';
import type { NewLog } from './write/new-log.js';
import type { ScoreView } from './present.js';
import { clearSearchText } from './search/search-store.js';
import { onPostgres, rowsInsert } from '../db/rows-insert.js';
import { ROLLUP_KINDS, type RollupKind, type RollupSource, rollupDeltas } from './rollups/rollup-deltas.js';
import { applyRollupDeltas } from './rollups/rollup-writes.js';
import { removeFromRollups } from './rollups/rollup-backfill.js';

export type LogRowWithOrg = StoredLog & { organization_name: string };

/** Rows per INSERT: ~60 columns × 200 rows stays well under both dialects' bound-parameter limits. */
const INSERT_CHUNK = 200;
const METADATA_CHUNK = 1000;

type Db = Kysely<Database> | Transaction<Database>;

/** The side-table rows of a log's metadata; they repeat the log's scope columns so lookups need not join. */
export function metadataRows(
  logId: number,
  log: { organization_id: string; timestamp: number; is_test: number },
  metadata: Record<string, unknown>,
) {
  return (
    Object.entries(metadata)
      // A key whose value is null counts as absent: `metadata__k isnull [true]` matches it. So does a
      // number JSON cannot hold (1e400 is read as Infinity), which the log's JSON keeps as null.
      .filter(
        ([, value]) => value !== undefined && value !== null && !(typeof value === 'number' && !Number.isFinite(value)),
      )
      .map(([key, value]) => ({
        log_id: logId,
        organization_id: log.organization_id,
        timestamp: log.timestamp,
        is_test: log.is_test,
        key,
        value_text: metadataText(value),
        value_num: metadataNumber(value),
      }))
  );
}

/** What a new log adds to the facet counts, given the side-table rows written for its metadata. */
export const facetSourceOf = (log: NewLog, metadata: FacetSource['metadata']): FacetSource => ({
  organization_id: log.row.organization_id,
  is_test: log.row.is_test,
  timestamp: log.row.timestamp,
  columns: log.row,
  metadata,
});

/** What stored logs, with their metadata rows, add to the facet counts (one read of the metadata for all). */
async function storedFacetSources(db: Db, logs: readonly RemovedLog[]): Promise<FacetSource[]> {
  const ids = logs.map((l) => Number(l.id));
  const metadata = new Map<number, { key: string; value_text: string }[]>();
  for (const r of await db
    .selectFrom('log_metadata')
    .select(['log_id', 'key', 'value_text'])
    .where('log_id', 'in', ids)
    .execute()) {
    const list = metadata.get(Number(r.log_id)) ?? [];
    list.push({ key: r.key, value_text: r.value_text });
    metadata.set(Number(r.log_id), list);
  }
  return logs.map((l) => ({
    organization_id: l.organization_id,
    is_test: l.is_test,
    timestamp: Number(l.timestamp),
    columns: l,
    metadata: metadata.get(Number(l.id)) ?? [],
  }));
}

/**
 * Inserts logs, their metadata rows, their facet counts and their rollups in the caller's transaction.
 * `rollups`: the rollup tables written — all; fewer only on a database an older version left (the
 * tests and benches of upgrades write as that version did).
 */
export async function insertLogs(
  trx: Db,
  logs: readonly NewLog[],
  rollups: readonly RollupKind[] = ROLLUP_KINDS,
): Promise<void> {
  const sources: FacetSource[] = [];
  // PostgreSQL (the writer's own thread there is the event loop): the statements' SQL written directly.
  const direct = onPostgres(trx);
  for (let i = 0; i < logs.length; i += INSERT_CHUNK) {
    const chunk = logs.slice(i, i + INSERT_CHUNK);
    const values = chunk.map((l) => l.row);
    const inserted = direct
      ? (
          await trx.executeQuery<{ id: number; unique_id: string }>(
            rowsInsert('logs', values, 'returning "id", "unique_id"'),
          )
        ).rows
      : await trx.insertInto('logs').values(values).returning(['id', 'unique_id']).execute();
    const idOf = new Map(inserted.map((r) => [r.unique_id, Number(r.id)]));
    const perLog = chunk.map((l) => metadataRows(idOf.get(l.row.unique_id)!, l.row, l.metadata));
    chunk.forEach((l, k) => sources.push(facetSourceOf(l, perLog[k])));
    const rows = perLog.flat();
    for (let j = 0; j < rows.length; j += METADATA_CHUNK) {
      const some = rows.slice(j, j + METADATA_CHUNK);
      if (direct) await trx.executeQuery(rowsInsert('log_metadata', some));
      else await trx.insertInto('log_metadata').values(some).execute();
    }
  }
  await applyFacetDeltas(trx, facetDeltas(sources));
  await applyRollupDeltas(
    trx,
    rollupDeltas(
      logs.map((l) => l.row),
      [],
      rollups,
    ),
  );
}

export async function findLog(db: Db, organizationId: string, uniqueId: string): Promise<LogRowWithOrg | null> {
  const row = await db
    .selectFrom('logs')
    .innerJoin('organizations', 'organizations.id', 'logs.organization_id')
    .selectAll('logs')
    .select('organizations.name as organization_name')
    .where('logs.organization_id', '=', organizationId)
    .where('logs.unique_id', '=', uniqueId)
    .executeTakeFirst();
  return row ?? null;
}

/** The scores of the given logs, as the map each log item shows (evaluator id → score). */
export async function scoresOfLogs(db: Db, logIds: readonly number[]): Promise<Map<number, Record<string, ScoreView>>> {
  const result = new Map<number, Record<string, ScoreView>>();
  if (logIds.length === 0) return result;
  const rows = await db
    .selectFrom('scores')
    .innerJoin('evaluators', 'evaluators.id', 'scores.evaluator_id')
    .select([
      'scores.log_id',
      'scores.evaluator_id',
      'scores.score_value',
      'evaluators.name',
      'evaluators.evaluator_slug',
    ])
    .where('scores.log_id', 'in', logIds)
    .execute();
  for (const r of rows) {
    const logId = Number(r.log_id);
    const map = result.get(logId) ?? {};
    map[r.evaluator_id] = { evaluator_name: r.name, evaluator_slug: r.evaluator_slug, score_value: r.score_value };
    result.set(logId, map);
  }
  return result;
}

/**
 * Which of the logs `ids` are still stored, their rows locked for the caller's transaction. Every change
 * of stored logs that moves their counts (a patch, a deletion, the retention sweep's) takes them first,
 * in id order, before the facet counts' and rollups' rows (which each writer locks in key order): on
 * PostgreSQL a patch and a deletion of one log, which locked those in opposite orders, deadlocked (found
 * by fuzzing). A log deleted meanwhile is left out, so its counts are taken away once. SQLite's one
 * writer at a time holds every row already.
 */
async function lockStoredLogs(trx: Db, ids: readonly number[], to: 'update' | 'delete'): Promise<Set<number>> {
  const rows = await trx
    .selectFrom('logs')
    .select('id')
    .where('id', 'in', ids)
    .orderBy('id')
    // A patch changes no key: a score added to the log meanwhile (its foreign key's share lock) need not wait.
    .$if(onPostgres(trx), (q) => (to === 'update' ? q.forNoKeyUpdate() : q.forUpdate()))
    .execute();
  return new Set(rows.map((r) => Number(r.id)));
}

export async function updateLog(
  db: Kysely<Database>,
  log: StoredLog,
  changes: { metadata?: Record<string, unknown>; custom_identifier?: string | null },
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    // Deleted meanwhile: nothing to change (the caller then answers 404).
    if ((await lockStoredLogs(trx, [log.id], 'update')).size === 0) return;
    const set: LogUpdate = {};
    if (changes.metadata !== undefined) set.metadata = JSON.stringify(changes.metadata);
    if (changes.custom_identifier !== undefined) set.custom_identifier = changes.custom_identifier;
    if (Object.keys(set).length > 0) await trx.updateTable('logs').set(set).where('id', '=', log.id).execute();
    if (changes.metadata !== undefined) {
      const [before] = await storedFacetSources(trx, [log]);
      await trx.deleteFrom('log_metadata').where('log_id', '=', log.id).execute();
      const rows = metadataRows(log.id, log, changes.metadata);
      if (rows.length > 0) await trx.insertInto('log_metadata').values(rows).execute();
      await applyFacetDeltas(trx, facetDeltas([{ ...before, metadata: rows }], [before]));
    }
  });
}

export async function deleteLog(db: Kysely<Database>, log: StoredLog): Promise<void> {
  await db.transaction().execute((trx) => removeLogs(trx, [log]));
}

/**
 * A stored log as far as its removal needs it: its id, and the columns its facet counts and its rollups
 * come from (FACET_FIELDS, ROLLUP_SOURCE_COLUMNS).
 */
export type RemovedLog = Pick<StoredLog, 'id'> & RollupSource & Record<string, unknown>;

/**
 * Deletes logs with everything that hangs off them — scores, metadata rows, their share of the facet
 * counts and of the rollups, their search text — in the caller's transaction (a log deleted by its route, or by retention).
 * Answers how many went: a log another transaction deleted meanwhile is not counted.
 */
export async function removeLogs(trx: Db, all: readonly RemovedLog[]): Promise<number> {
  if (all.length === 0) return 0;
  const stored = await lockStoredLogs(
    trx,
    all.map((l) => Number(l.id)),
    'delete',
  );
  const logs = all.filter((l) => stored.has(Number(l.id)));
  if (logs.length === 0) return 0;
  const ids = logs.map((l) => Number(l.id));
  await applyFacetDeltas(trx, facetDeltas([], await storedFacetSources(trx, logs)));
  await removeFromRollups(trx, logs);
  // Deleted explicitly as well as by cascade: SQLite enforces foreign keys only per connection setting.
  await trx.deleteFrom('scores').where('log_id', 'in', ids).execute();
  await trx.deleteFrom('log_metadata').where('log_id', 'in', ids).execute();
  await clearSearchText(trx, ids);
  await trx.deleteFrom('logs').where('id', 'in', ids).execute();
  return logs.length;
}
