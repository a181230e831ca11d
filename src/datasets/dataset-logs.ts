/** Reads and writes of single dataset logs and their scores; the dataset is already known to be the caller's. */
import type { Insertable, Kysely, SelectQueryBuilder, Transaction } from 'kysely';
import type { Database, DatasetLogsTable } from '../db/schema.js';
import type { DatasetLogItem } from './dataset-log-item.js';
import { datasetMetadataRows } from './repository.js';

type Db = Kysely<Database> | Transaction<Database>;

/** Scores of the given dataset logs, per log, oldest first. */
export async function scoresOfDatasetLogs(db: Db, logIds: number[]) {
  const result = new Map<number, DatasetLogItem['scores']>();
  if (logIds.length === 0) return result;
  const rows = await db
    .selectFrom('dataset_log_scores as s')
    .innerJoin('evaluators as e', 'e.id', 's.evaluator_id')
    .select(['s.log_id', 's.evaluator_id', 'e.name', 'e.evaluator_slug', 's.score_value'])
    .where('s.log_id', 'in', logIds)
    .orderBy('s.created_at')
    .orderBy('s.id')
    .execute();
  for (const r of rows) {
    const id = Number(r.log_id);
    const list = result.get(id) ?? [];
    list.push({
      evaluator_id: r.evaluator_id,
      evaluator_name: r.name,
      evaluator_slug: r.evaluator_slug,
      score_value: Number(r.score_value),
    });
    result.set(id, list);
  }
  return result;
}

/** A dataset log by its id (the digits of its id string), in that dataset; undefined when none. */
export async function findDatasetLog(db: Db, datasetId: string, logId: string) {
  if (!/^\d{1,15}$/.test(logId)) return undefined;
  return db
    .selectFrom('dataset_logs')
    .selectAll()
    .where('dataset_id', '=', datasetId)
    .where('id', '=', Number(logId))
    .executeTakeFirst();
}

/** Inserts one dataset log written by hand, with its metadata rows; answers its id. */
export async function insertDatasetLog(
  trx: Transaction<Database>,
  row: Insertable<DatasetLogsTable>,
  metadata: Record<string, unknown>,
): Promise<number> {
  const inserted = await trx.insertInto('dataset_logs').values(row).returning('id').executeTakeFirstOrThrow();
  const id = Number(inserted.id);
  const rows = datasetMetadataRows({ id, dataset_id: row.dataset_id, organization_id: row.organization_id }, metadata);
  if (rows.length > 0) await trx.insertInto('dataset_log_metadata').values(rows).execute();
  return id;
}

export interface DatasetLogChanges {
  annotation_status?: string;
  annotation_completed_by?: string | null;
  metadata?: Record<string, unknown>;
  input?: string | null;
  output?: string | null;
}

export async function updateDatasetLog(
  trx: Transaction<Database>,
  log: { id: number; dataset_id: string; organization_id: string },
  changes: DatasetLogChanges,
  now: number,
): Promise<void> {
  const { metadata, ...columns } = changes;
  await trx
    .updateTable('dataset_logs')
    .set({ ...columns, ...(metadata !== undefined ? { metadata: JSON.stringify(metadata) } : {}), updated_at: now })
    .where('id', '=', log.id)
    .execute();
  if (metadata !== undefined) {
    await trx.deleteFrom('dataset_log_metadata').where('log_id', '=', log.id).execute();
    const rows = datasetMetadataRows(log, metadata);
    if (rows.length > 0) await trx.insertInto('dataset_log_metadata').values(rows).execute();
  }
}

/**
 * Deletes the dataset logs `selected` names (a query of their ids), with their metadata and scores —
 * explicitly, as SQLite enforces foreign keys per connection setting; answers how many.
 */
export async function deleteDatasetLogs(
  trx: Transaction<Database>,
  selected: SelectQueryBuilder<Database, 'dataset_logs', { id: number }>,
): Promise<number> {
  await trx.deleteFrom('dataset_log_scores').where('log_id', 'in', selected).execute();
  await trx.deleteFrom('dataset_log_metadata').where('log_id', 'in', selected).execute();
  const result = await trx.deleteFrom('dataset_logs').where('id', 'in', selected).executeTakeFirst();
  return Number(result.numDeletedRows);
}
