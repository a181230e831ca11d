/**
 * Datasets of logs (src/datasets). A dataset log is a copy: it has no foreign key to the log it came
 * from, so changing or deleting that log leaves the copy as it was; a unique index on the source log's
 * id (never reused) keeps a log from being added to one dataset twice. Its metadata and scores have side
 * tables shaped like the request logs' (log_id, organization_id, key, value_text, value_num), so the one
 * filter compiler serves both lists; the metadata rows also carry the dataset's id, which leads their
 * index: metadata filters and filter_options read one dataset's entries only.
 *
 * One covering index serves the list: led by (dataset_id, id), it is appended to in order as logs are
 * added (ten indexes, one per sortable column, made adding 100,000 logs five times slower), and holds
 * every sortable and filter_options column, so a sorted page or the value counts of a dataset are read
 * from it alone (src/datasets/list.ts). The timestamp, the other usual order, and the columns of few
 * values have indexes of their own.
 */
import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../dialect.js';
import {
  createIndex,
  createScores,
  defaulted,
  optional,
  ownedRecords,
  required,
  serialId,
  timestamps,
} from './columns.js';

/** The dataset-log columns the list sorts by (src/datasets/fields.ts). */
export const DATASET_LOG_SORT_COLUMNS = [
  'timestamp',
  'start_time',
  'cost',
  'latency',
  'prompt_tokens',
  'completion_tokens',
  'total_request_tokens',
  'status_code',
  'model',
  'annotation_status',
];

/** Sortable columns with an index of their own besides dataset_logs_list_idx (src/datasets/list.ts). */
export const DATASET_LOG_INDEXED_SORTS = ['status_code', 'model', 'annotation_status'];

/** filter_options columns that are not sortable (src/datasets/list.ts counts them from the index). */
const OPTION_COLUMNS = ['status', 'environment', 'log_type'];

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  const pg = isPostgres(db);
  await ownedRecords(db, 'datasets')
    .$call(required({ name: 'text' }))
    .$call(defaulted('text', '', ['description']))
    .$call(required({ type: 'text', status: 'text' }))
    // revision counts the writes to the dataset's logs: what its cached filter_options were computed at.
    .$call(defaulted('integer', 0, ['log_count', 'completed_annotation_count', 'revision']))
    .$call(timestamps)
    .execute();
  await createIndex(db, 'datasets_org_idx', 'datasets', ['organization_id', 'created_at']);

  await db.schema
    .createTable('dataset_logs')
    .$call(serialId(db))
    .addColumn('dataset_id', 'text', (c) => c.notNull().references('datasets.id').onDelete('cascade'))
    .$call(required({ organization_id: 'text' }))
    .addColumn('source_log_id', 'bigint')
    .addColumn('source_log_unique_id', 'text')
    .$call(defaulted('text', '', ['environment', 'log_type']))
    .$call(required({ timestamp: 'bigint', start_time: 'bigint' }))
    .$call(defaulted('integer', 0, ['prompt_tokens', 'completion_tokens', 'total_request_tokens']))
    .$call(defaulted('double precision', 0, ['cost', 'latency']))
    .$call(defaulted('text', '', ['model']))
    .$call(defaulted('integer', 200, ['status_code']))
    .$call(defaulted('text', 'success', ['status']))
    .$call(optional('text', ['input', 'output']))
    .$call(defaulted('text', '{}', ['metadata']))
    .$call(defaulted('text', 'pending', ['annotation_status']))
    .addColumn('annotation_completed_by', 'text')
    .$call(timestamps)
    .execute();
  await db.schema
    .createIndex('dataset_logs_source_unique')
    .unique()
    .on('dataset_logs')
    .columns(['dataset_id', 'source_log_id'])
    .execute();
  await createIndex(db, 'dataset_logs_list_idx', 'dataset_logs', [
    'dataset_id',
    'id',
    ...DATASET_LOG_SORT_COLUMNS.filter((c) => c !== 'timestamp'),
    ...OPTION_COLUMNS,
  ]);
  await createIndex(db, 'dataset_logs_timestamp_idx', 'dataset_logs', ['dataset_id', 'timestamp', 'id']);
  // Columns of few values (new logs land at the end of one value's run, so these cost little to keep):
  // a page sorted by one is read from its index. Text in byte order on PostgreSQL, as the list sorts it.
  for (const column of DATASET_LOG_INDEXED_SORTS) {
    const key = pg && column !== 'status_code' ? sql`${sql.ref(column)} collate "C"` : sql.ref(column);
    await sql`create index ${sql.id(`dataset_logs_${column}_idx`)} on dataset_logs (dataset_id, ${key}, id)`.execute(
      db,
    );
  }

  await db.schema
    .createTable('dataset_log_metadata')
    .addColumn('log_id', 'bigint', (c) => c.notNull().references('dataset_logs.id').onDelete('cascade'))
    .$call(required({ dataset_id: 'text', organization_id: 'text', key: 'text', value_text: 'text' }))
    .addColumn('value_num', 'double precision')
    .execute();
  await createIndex(db, 'dataset_log_metadata_lookup_idx', 'dataset_log_metadata', [
    'dataset_id',
    'key',
    'value_text',
    'log_id',
  ]);
  await db.schema.createIndex('dataset_log_metadata_log_idx').on('dataset_log_metadata').column('log_id').execute();

  await createScores(db, 'dataset_log_scores', 'dataset_logs');
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['dataset_log_scores', 'dataset_log_metadata', 'dataset_logs', 'datasets']) {
    await db.schema.dropTable(table).execute();
  }
}
