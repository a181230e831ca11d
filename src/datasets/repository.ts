/**
 * Reads and writes of datasets and their logs. Every query is scoped by organization or by a dataset
 * the caller has already been found to own. Copies are made in SQL (INSERT … SELECT), never row by row
 * through JavaScript; every write runs in the caller's transaction and ends by recounting the dataset.
 */
import { type Kysely, type SelectQueryBuilder, type Transaction, sql } from 'kysely';
import type { Database, DatasetsTable } from '../db/schema.js';
import { notFound } from '../errors.js';
import { metadataNumber, metadataText } from '../db/metadata-values.js';
import { USAGE_COLUMNS } from '../logs/list/rows.js';

type Db = Kysely<Database> | Transaction<Database>;
type LogsQuery = SelectQueryBuilder<Database, 'logs', object>;

export async function findDataset(db: Db, organizationId: string, id: string) {
  return db
    .selectFrom('datasets')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function listDatasets(db: Db, organizationId: string, limit: number, offset: number) {
  const [rows, total] = await Promise.all([
    db
      .selectFrom('datasets')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .offset(offset)
      .execute(),
    db
      .selectFrom('datasets')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('organization_id', '=', organizationId)
      .executeTakeFirstOrThrow(),
  ]);
  return { rows, count: Number(total.n) };
}

export async function insertDataset(db: Db, row: DatasetsTable): Promise<void> {
  await db.insertInto('datasets').values(row).execute();
}

/**
 * Starts a write to a dataset: takes its row lock (PostgreSQL) or the write lock (SQLite) first, so
 * that two writes to one dataset run one after the other; answers the dataset's highest log id, below
 * which every log was there before this write.
 */
export async function beginDatasetWrite(trx: Transaction<Database>, datasetId: string, now: number) {
  // The dataset was found before this transaction began; a call that deleted it since wins, and this
  // write is then a 404 rather than rows pointing at no dataset (a 500 of the foreign key, found by fuzzing).
  const touched = await trx
    .updateTable('datasets')
    .set((eb) => ({ updated_at: now, revision: eb('revision', '+', 1) }))
    .where('id', '=', datasetId)
    .executeTakeFirst();
  if (Number(touched.numUpdatedRows) === 0) throw notFound(`No dataset with id '${datasetId}'.`);
  const row = await trx
    .selectFrom('dataset_logs')
    .select((eb) => eb.fn.max('id').as('max'))
    .where('dataset_id', '=', datasetId)
    .executeTakeFirst();
  return Number(row?.max ?? 0);
}

/** log_count and completed_annotation_count, recounted: always right, whatever the write did. */
export async function recountDataset(trx: Transaction<Database>, datasetId: string): Promise<void> {
  const counts = await trx
    .selectFrom('dataset_logs')
    .select((eb) => [
      eb.fn.countAll<number>().as('logs'),
      eb.fn.sum<number>(sql`case when annotation_status = 'completed' then 1 else 0 end`).as('completed'),
    ])
    .where('dataset_id', '=', datasetId)
    .executeTakeFirstOrThrow();
  await trx
    .updateTable('datasets')
    .set({ log_count: Number(counts.logs), completed_annotation_count: Number(counts.completed ?? 0) })
    .where('id', '=', datasetId)
    .execute();
}

/** `logs` without those already in the dataset (by the source log's id, which is never reused). */
export function notInDataset(query: LogsQuery, datasetId: string): LogsQuery {
  return query.where((eb) =>
    eb.not(
      eb.exists(
        eb
          .selectFrom('dataset_logs as d')
          .select(sql`1`.as('one'))
          .where('d.dataset_id', '=', datasetId)
          .whereRef('d.source_log_id', '=', 'logs.id'),
      ),
    ),
  );
}

export async function countLogs(query: LogsQuery): Promise<number> {
  const row = await query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

const COPIED = [
  'environment',
  'log_type',
  'timestamp',
  ...USAGE_COLUMNS,
  'model',
  'status_code',
  'status',
  'error_message',
  'error_code',
  'input',
  'output',
  'metadata',
] as const;

/**
 * Copies the logs `query` selects into the dataset — `limit` of them chosen at random when given — with
 * their metadata and scores; answers how many were copied. `before` is beginDatasetWrite's answer.
 */
export async function copyLogs(
  trx: Transaction<Database>,
  datasetId: string,
  query: LogsQuery,
  before: number,
  now: number,
  limit?: number,
): Promise<number> {
  if (limit === 0) return 0;
  let select = query.select([
    sql<string>`${datasetId}`.as('dataset_id'),
    'logs.organization_id',
    'logs.id as source_log_id',
    'logs.unique_id as source_log_unique_id',
    ...COPIED.map((c) => `logs.${c}` as const),
    sql<number>`coalesce(logs.start_time, logs.timestamp)`.as('start_time'),
    sql<string>`'pending'`.as('annotation_status'),
    sql<number>`cast(${now} as bigint)`.as('created_at'),
    sql<number>`cast(${now} as bigint)`.as('updated_at'),
  ]);
  if (limit !== undefined) select = select.orderBy(sql`random()`).limit(limit);
  const columns = [
    'dataset_id',
    'organization_id',
    'source_log_id',
    'source_log_unique_id',
    ...COPIED,
    'start_time',
    'annotation_status',
    'created_at',
    'updated_at',
  ] as const;
  const result = await trx.insertInto('dataset_logs').columns(columns).expression(select).executeTakeFirst();
  const added = Number(result.numInsertedOrUpdatedRows ?? 0);
  if (added === 0) return 0;
  const copies = (eb: Transaction<Database>) =>
    eb.selectFrom('dataset_logs as d').where('d.dataset_id', '=', datasetId).where('d.id', '>', before);
  await trx
    .insertInto('dataset_log_metadata')
    .columns(['log_id', 'dataset_id', 'organization_id', 'key', 'value_text', 'value_num'])
    .expression(
      copies(trx)
        .innerJoin('log_metadata as m', 'm.log_id', 'd.source_log_id')
        .select(['d.id', 'd.dataset_id', 'm.organization_id', 'm.key', 'm.value_text', 'm.value_num']),
    )
    .execute();
  await trx
    .insertInto('dataset_log_scores')
    .columns([
      'id',
      'organization_id',
      'log_id',
      'evaluator_id',
      'numerical_value',
      'boolean_value',
      'score_value',
      'created_at',
    ])
    .expression(
      copies(trx)
        .innerJoin('scores as s', 's.log_id', 'd.source_log_id')
        .select([
          sql<string>`'copy:' || cast(d.id as text) || ':' || s.evaluator_id`.as('id'),
          's.organization_id',
          'd.id',
          's.evaluator_id',
          's.numerical_value',
          's.boolean_value',
          's.score_value',
          's.created_at',
        ]),
    )
    .execute();
  return added;
}

/** The metadata side-table rows of a dataset log. */
export function datasetMetadataRows(
  log: { id: number; dataset_id: string; organization_id: string },
  metadata: Record<string, unknown>,
) {
  return Object.entries(metadata)
    .filter(([, value]) => value !== undefined && value !== null)
    .map(([key, value]) => ({
      log_id: log.id,
      dataset_id: log.dataset_id,
      organization_id: log.organization_id,
      key,
      value_text: metadataText(value),
      value_num: metadataNumber(value),
    }));
}
