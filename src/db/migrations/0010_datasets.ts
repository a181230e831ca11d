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
  await db.schema
    .createTable('datasets')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('log_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('completed_annotation_count', 'integer', (c) => c.notNull().defaultTo(0))
    // Counts the writes to the dataset's logs: what its cached filter_options were computed at.
    .addColumn('revision', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('datasets_org_idx').on('datasets').columns(['organization_id', 'created_at']).execute();

  await db.schema
    .createTable('dataset_logs')
    .addColumn('id', pg ? 'bigserial' : 'integer', (c) => (pg ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('dataset_id', 'text', (c) => c.notNull().references('datasets.id').onDelete('cascade'))
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('source_log_id', 'bigint')
    .addColumn('source_log_unique_id', 'text')
    .addColumn('environment', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('log_type', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('timestamp', 'bigint', (c) => c.notNull())
    .addColumn('start_time', 'bigint', (c) => c.notNull())
    .addColumn('prompt_tokens', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('completion_tokens', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('total_request_tokens', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('cost', 'double precision', (c) => c.notNull().defaultTo(0))
    .addColumn('latency', 'double precision', (c) => c.notNull().defaultTo(0))
    .addColumn('model', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('status_code', 'integer', (c) => c.notNull().defaultTo(200))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('success'))
    .addColumn('input', 'text')
    .addColumn('output', 'text')
    .addColumn('metadata', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('annotation_status', 'text', (c) => c.notNull().defaultTo('pending'))
    .addColumn('annotation_completed_by', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('dataset_logs_source_unique')
    .unique()
    .on('dataset_logs')
    .columns(['dataset_id', 'source_log_id'])
    .execute();
  await db.schema
    .createIndex('dataset_logs_list_idx')
    .on('dataset_logs')
    .columns(['dataset_id', 'id', ...DATASET_LOG_SORT_COLUMNS.filter((c) => c !== 'timestamp'), ...OPTION_COLUMNS])
    .execute();
  await db.schema
    .createIndex('dataset_logs_timestamp_idx')
    .on('dataset_logs')
    .columns(['dataset_id', 'timestamp', 'id'])
    .execute();
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
    .addColumn('dataset_id', 'text', (c) => c.notNull())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('value_text', 'text', (c) => c.notNull())
    .addColumn('value_num', 'double precision')
    .execute();
  await db.schema
    .createIndex('dataset_log_metadata_lookup_idx')
    .on('dataset_log_metadata')
    .columns(['dataset_id', 'key', 'value_text', 'log_id'])
    .execute();
  await db.schema.createIndex('dataset_log_metadata_log_idx').on('dataset_log_metadata').column('log_id').execute();

  await db.schema
    .createTable('dataset_log_scores')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('log_id', 'bigint', (c) => c.notNull().references('dataset_logs.id').onDelete('cascade'))
    .addColumn('evaluator_id', 'text', (c) => c.notNull().references('evaluators.id').onDelete('cascade'))
    .addColumn('numerical_value', 'double precision')
    .addColumn('boolean_value', 'integer')
    .addColumn('score_value', 'double precision', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('dataset_log_scores_log_evaluator_unique', ['log_id', 'evaluator_id'])
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['dataset_log_scores', 'dataset_log_metadata', 'dataset_logs', 'datasets']) {
    await db.schema.dropTable(table).execute();
  }
}
