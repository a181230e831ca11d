/**
 * Datasets (docs/api.md "Datasets"): creating them from a time range and filters, adding and removing
 * logs, annotating. Each write is one transaction that ends by recounting the dataset, so a failure
 * leaves nothing half-added and the counts are always right.
 */
import crypto from 'node:crypto';
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { z } from 'zod';
import type { AuthContext } from '../auth/authenticator.js';
import type { DbHandle } from '../db/connect.js';
import type { Database, DatasetsTable } from '../db/schema.js';
import { AppError, notFound } from '../errors.js';
import { parseBodyFilters } from '../filters/parse-body.js';
import { LOG_FIELDS, type FieldRegistry } from '../filters/registry.js';
import { and, type FilterNode } from '../filters/types.js';
import { checkIndexedText, checkMetadata, INDEXED_TEXT_BYTES } from '../logs/indexed-text.js';
import { toJsonText } from '../logs/json-text.js';
import { filteredLogs } from '../logs/list/list.js';
import { planFilter } from '../logs/list/filter-plan.js';
import { type DatasetLogItem, presentDatasetLog } from './dataset-log-item.js';
import {
  deleteDatasetLogs,
  findDatasetLog,
  insertDatasetLog,
  scoresOfDatasetLogs,
  updateDatasetLog,
} from './dataset-logs.js';
import { DATASET_LOG_FIELDS } from './fields.js';
import { isMessages } from './texts.js';
import { filteredDatasetLogs } from './list.js';
import {
  beginDatasetWrite,
  copyLogs,
  countLogs,
  findDataset,
  insertDataset,
  notInDataset,
  recountDataset,
} from './repository.js';
import type {
  AddByIds,
  BulkAdd,
  CreateDataset,
  Dataset,
  HandWrittenLog,
  PatchDataset,
  PatchDatasetLog,
  RemoveLogs,
} from './schemas.js';
import { MAX_HAND_WRITTEN_CHARS } from './schemas.js';

const iso = (ms: number) => new Date(Number(ms)).toISOString();

export function datasetView(row: Selectable<DatasetsTable>): z.output<typeof Dataset> {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    type: row.type as 'sampling' | 'manual',
    status: 'ready',
    log_count: Number(row.log_count),
    completed_annotation_count: Number(row.completed_annotation_count),
    organization_id: row.organization_id,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/** The caller's dataset, or 404 — also for another organization's, which the caller must not learn of. */
export async function requireDataset(db: Kysely<Database>, auth: AuthContext, id: string) {
  const row = await findDataset(db, auth.organizationId, id);
  if (!row) throw notFound(`No dataset with id '${id}'.`);
  return row;
}

function filterOf(registry: FieldRegistry, filters: unknown, at: string): FilterNode | null {
  const leaves = parseBodyFilters(registry, filters, at);
  if (leaves.length === 0) return null;
  return leaves.length === 1 ? leaves[0] : and(leaves);
}

/** How many of n matching logs a sampling percentage keeps: round(n·p/100). */
export const sampleSize = (n: number, percentage: number) => Math.round((n * percentage) / 100);

interface RangeCopy {
  start: number;
  end: number;
  filter: FilterNode | null;
  percentage: number;
  /** The dataset was created by this transaction. */
  isNew: boolean;
}

/** Copies the matching logs of a time range (all environments) not yet in the dataset, sampled. */
async function copyRange(
  trx: Transaction<Database>,
  handle: DbHandle,
  auth: AuthContext,
  datasetId: string,
  range: RangeCopy,
  now: number,
): Promise<number> {
  const before = await beginDatasetWrite(trx, datasetId, now);
  const scope = { organizationId: auth.organizationId, start: range.start, end: range.end, isTest: null };
  // Planned as a list's filter is: a search filter needs it (src/logs/search/search-plan.ts).
  const filter = range.filter && (await planFilter(trx, handle.dialect, scope, range.filter));
  // A new dataset holds nothing yet: no need to look for logs already in it.
  const matching = () => {
    const query = filteredLogs(trx, handle.dialect, scope, filter);
    return range.isNew ? query : notInDataset(query, datasetId);
  };
  const n = range.percentage >= 100 ? undefined : await countLogs(matching());
  const limit = n === undefined ? undefined : sampleSize(n, range.percentage);
  const added = await copyLogs(trx, datasetId, matching(), before, now, limit);
  await recountDataset(trx, datasetId);
  return added;
}

function timeRange(start: number | undefined, end: number | undefined, now: number) {
  if (start === undefined) {
    if (end !== undefined) throw new AppError(400, 'invalid_value', 'end_time needs start_time.', 'start_time');
    return null;
  }
  const to = end ?? now;
  if (start > to) throw new AppError(400, 'invalid_value', 'start_time must not be after end_time.', 'start_time');
  return { start, end: to };
}

export async function createDataset(
  handle: DbHandle,
  auth: AuthContext,
  input: z.output<typeof CreateDataset>,
): Promise<z.output<typeof Dataset>> {
  const now = Date.now();
  const range = timeRange(input.start_time, input.end_time, now);
  if (!range) {
    const param =
      input.initial_log_filters !== undefined
        ? 'initial_log_filters'
        : input.sampling !== undefined
          ? 'sampling'
          : null;
    if (param)
      throw new AppError(
        400,
        'invalid_value',
        `${param} needs start_time: the logs are taken from a time range.`,
        param,
      );
  }
  const filter = filterOf(LOG_FIELDS, input.initial_log_filters, 'initial_log_filters');
  const row: DatasetsTable = {
    id: crypto.randomUUID(),
    organization_id: auth.organizationId,
    name: input.name,
    description: input.description ?? '',
    type: range ? 'sampling' : 'manual',
    status: 'ready',
    log_count: 0,
    completed_annotation_count: 0,
    revision: 0,
    created_at: now,
    updated_at: now,
  };
  await handle.bulk.transaction().execute(async (trx) => {
    await insertDataset(trx, row);
    if (range) {
      const copy = { ...range, filter, percentage: input.sampling ?? 100, isNew: true };
      await copyRange(trx, handle, auth, row.id, copy, now);
    }
  });
  return datasetView((await findDataset(handle.db, auth.organizationId, row.id))!);
}

export async function patchDataset(db: Kysely<Database>, row: DatasetsTable, changes: z.output<typeof PatchDataset>) {
  await db
    .updateTable('datasets')
    .set({ ...changes, updated_at: Date.now() })
    .where('id', '=', row.id)
    .execute();
  // Deleted by another call since it was found: a 404, as if this call had come second.
  const updated = await findDataset(db, row.organization_id, row.id);
  if (!updated) throw notFound(`No dataset with id '${row.id}'.`);
  return datasetView(updated);
}

export async function deleteDataset(db: Kysely<Database>, row: DatasetsTable): Promise<void> {
  await db.transaction().execute(async (trx) => {
    // The dataset's row first, as every other write to it takes it: taking its logs first and the row
    // last was a deadlock on PostgreSQL with a concurrent write to the same dataset (found by fuzzing).
    await beginDatasetWrite(trx, row.id, Date.now());
    await deleteDatasetLogs(trx, trx.selectFrom('dataset_logs').select('id').where('dataset_id', '=', row.id));
    await trx.deleteFrom('datasets').where('id', '=', row.id).execute();
  });
}

/** Copies the named logs, all or nothing: an unknown id is a 400 listing every unknown one. */
export async function addLogsByIds(
  db: Kysely<Database>,
  auth: AuthContext,
  dataset: DatasetsTable,
  input: z.output<typeof AddByIds>,
) {
  const wanted = [...new Set(input.log_ids)];
  const now = Date.now();
  return db.transaction().execute(async (trx) => {
    const found = await trx
      .selectFrom('logs')
      .select('unique_id')
      .where('organization_id', '=', auth.organizationId)
      .where('unique_id', 'in', wanted)
      .execute();
    const known = new Set(found.map((r) => r.unique_id));
    const unknown = wanted.filter((id) => !known.has(id));
    if (unknown.length > 0) {
      const shown = unknown.slice(0, 20).join(', ') + (unknown.length > 20 ? ` and ${unknown.length - 20} more` : '');
      throw new AppError(
        400,
        'unknown_log_ids',
        `log_ids: no log with unique_id ${shown}; nothing was added.`,
        'log_ids',
      );
    }
    const before = await beginDatasetWrite(trx, dataset.id, now);
    const query = trx
      .selectFrom('logs')
      .where('logs.organization_id', '=', auth.organizationId)
      .where('logs.unique_id', 'in', wanted);
    await copyLogs(trx, dataset.id, notInDataset(query, dataset.id), before, now);
    await recountDataset(trx, dataset.id);
    return addedSince(trx, dataset.id, before);
  });
}

async function addedSince(trx: Transaction<Database>, datasetId: string, before: number) {
  const rows = await trx
    .selectFrom('dataset_logs')
    .select('id')
    .where('dataset_id', '=', datasetId)
    .where('id', '>', before)
    .orderBy('id')
    .execute();
  return { added_count: rows.length, ids: rows.map((r) => String(r.id)) };
}

/** A hand-written input or output as stored (JSON text), within MAX_HAND_WRITTEN_CHARS. */
function handWrittenText(value: unknown, field: 'input' | 'output'): string | null {
  const text = toJsonText(value);
  if (text !== null && text.length > MAX_HAND_WRITTEN_CHARS) {
    throw new AppError(
      400,
      'value_too_long',
      `${field}: its JSON text is longer than ${MAX_HAND_WRITTEN_CHARS} characters, the most a dataset log ` +
        'written by hand may hold.',
      field,
    );
  }
  return text;
}

/** One log written by hand in the unified format. */
export async function addHandWrittenLog(
  db: Kysely<Database>,
  auth: AuthContext,
  dataset: DatasetsTable,
  input: z.output<typeof HandWrittenLog>,
) {
  checkIndexedText(input.model, INDEXED_TEXT_BYTES.model, 'model');
  checkMetadata(input.metadata);
  const inputText = handWrittenText(input.input, 'input');
  const outputText = handWrittenText(input.output, 'output');
  const metrics = input.metrics ?? {};
  const prompt = metrics.prompt_tokens ?? 0;
  const completion = metrics.completion_tokens ?? 0;
  const now = Date.now();
  const latency = metrics.latency ?? 0;
  return db.transaction().execute(async (trx) => {
    const before = await beginDatasetWrite(trx, dataset.id, now);
    await insertDatasetLog(
      trx,
      {
        dataset_id: dataset.id,
        organization_id: auth.organizationId,
        source_log_id: null,
        source_log_unique_id: null,
        environment: auth.isTest ? 'test' : 'prod',
        log_type: input.log_type ?? (isMessages(input.input) ? 'chat' : 'text'),
        timestamp: now,
        start_time: Math.round(now - latency * 1000),
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_request_tokens: prompt + completion,
        cost: metrics.cost ?? 0,
        unpriced: 0,
        latency,
        model: input.model ?? '',
        status_code: 200,
        status: 'success',
        error_message: null,
        error_code: null,
        input: inputText,
        output: outputText,
        metadata: JSON.stringify(input.metadata ?? {}),
        annotation_status: 'pending',
        annotation_completed_by: null,
        created_at: now,
        updated_at: now,
      },
      input.metadata ?? {},
    );
    await recountDataset(trx, dataset.id);
    return addedSince(trx, dataset.id, before);
  });
}

export async function bulkAdd(
  handle: DbHandle,
  auth: AuthContext,
  dataset: DatasetsTable,
  input: z.output<typeof BulkAdd>,
) {
  const now = Date.now();
  const range = timeRange(input.start_time, input.end_time, now)!;
  const filter = filterOf(LOG_FIELDS, input.filters, 'filters');
  const added = await handle.bulk
    .transaction()
    .execute((trx) =>
      copyRange(
        trx,
        handle,
        auth,
        dataset.id,
        { ...range, filter, percentage: input.sampling_percentage ?? 100, isNew: false },
        now,
      ),
    );
  return { added_count: added };
}

/** Removes the logs the filters match, or all of them when asked to in so many words. */
export async function removeLogs(
  handle: DbHandle,
  auth: AuthContext,
  dataset: DatasetsTable,
  input: z.output<typeof RemoveLogs>,
) {
  const filter = filterOf(DATASET_LOG_FIELDS, input.filters, 'filters');
  if (!filter && input.is_deleting_all_logs !== true) {
    throw new AppError(
      400,
      'invalid_value',
      'Give filters naming the logs to remove, or {"is_deleting_all_logs": true} to remove every log.',
      'filters',
    );
  }
  const now = Date.now();
  const removed = await handle.bulk.transaction().execute(async (trx) => {
    await beginDatasetWrite(trx, dataset.id, now);
    const selected = filteredDatasetLogs(trx, handle.dialect, auth.organizationId, dataset.id, filter).select(
      'dataset_logs.id',
    );
    const count = await deleteDatasetLogs(trx, selected);
    await recountDataset(trx, dataset.id);
    return count;
  });
  return { removed_count: removed };
}

export async function requireDatasetLog(db: Kysely<Database>, dataset: DatasetsTable, logId: string) {
  const row = await findDatasetLog(db, dataset.id, logId);
  if (!row) throw notFound(`No log with id '${logId}' in this dataset.`);
  return row;
}

export async function getDatasetLogItem(db: Kysely<Database>, dataset: DatasetsTable, logId: string) {
  const row = await requireDatasetLog(db, dataset, logId);
  const scores = await scoresOfDatasetLogs(db, [Number(row.id)]);
  return presentDatasetLog(row, scores.get(Number(row.id)) ?? []);
}

/** Annotation and edits; "completed" without annotation_completed_by records the calling key's owner. */
export async function patchDatasetLog(
  db: Kysely<Database>,
  auth: AuthContext,
  dataset: DatasetsTable,
  logId: string,
  input: z.output<typeof PatchDatasetLog>,
): Promise<DatasetLogItem> {
  const row = await requireDatasetLog(db, dataset, logId);
  checkMetadata(input.metadata);
  const texts = {
    ...('input' in input ? { input: handWrittenText(input.input, 'input') } : {}),
    ...('output' in input ? { output: handWrittenText(input.output, 'output') } : {}),
  };
  let completedBy: string | null | undefined;
  if (input.annotation_completed_by !== undefined) {
    completedBy =
      input.annotation_completed_by === null
        ? null
        : JSON.stringify({ first_name: '', last_name: '', email: '', ...input.annotation_completed_by });
  } else if (input.annotation_status === 'completed') {
    completedBy = JSON.stringify(auth.owner);
  }
  const now = Date.now();
  await db.transaction().execute(async (trx) => {
    await beginDatasetWrite(trx, dataset.id, now);
    await updateDatasetLog(
      trx,
      { id: Number(row.id), dataset_id: row.dataset_id, organization_id: row.organization_id },
      {
        ...(input.annotation_status !== undefined ? { annotation_status: input.annotation_status } : {}),
        ...(completedBy !== undefined ? { annotation_completed_by: completedBy } : {}),
        ...(input.metadata !== undefined ? { metadata: input.metadata } : {}),
        ...texts,
      },
      now,
    );
    await recountDataset(trx, dataset.id);
  });
  return getDatasetLogItem(db, dataset, logId);
}

export async function removeDatasetLog(db: Kysely<Database>, dataset: DatasetsTable, logId: string) {
  const row = await requireDatasetLog(db, dataset, logId);
  await db.transaction().execute(async (trx) => {
    await beginDatasetWrite(trx, dataset.id, Date.now());
    await deleteDatasetLogs(trx, trx.selectFrom('dataset_logs').select('id').where('id', '=', Number(row.id)));
    await recountDataset(trx, dataset.id);
  });
}
