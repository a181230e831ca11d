/**
 * The dataset-log list (docs/api.md "Dataset logs"): one dataset's logs, filtered with the filter
 * language over DATASET_LOG_FIELDS, sorted, paged; filter_options counted over the whole dataset.
 */
import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type { DialectName } from '../db/connect.js';
import type { Database, DatasetLogsTable } from '../db/schema.js';
import { compileFilter } from '../filters/compile.js';
import { type FilterOption, fieldOption, MAX_VALUE_CHOICES, metadataOption, optionFields } from '../filters/options.js';
import type { ListSort } from '../filters/sort.js';
import type { FilterNode } from '../filters/types.js';
import { pageOffset, type Paging } from '../util/paging.js';
import {
  DATASET_LARGE_COLUMNS,
  type DatasetLargeColumn,
  type DatasetLogItem,
  presentDatasetLog,
} from './dataset-log-item.js';
import { LIST_PREVIEW_CHARS, USAGE_COLUMNS } from '../logs/list/rows.js';
import { DATASET_LOG_INDEXED_SORTS } from '../db/migrations/0010_datasets.js';
import { DATASET_LOG_FIELDS } from './fields.js';
import { scoresOfDatasetLogs } from './dataset-logs.js';

type DatasetLogsQuery = SelectQueryBuilder<Database, 'dataset_logs', object>;

/** Metadata keys offered at most; each key's values are bounded like any field's. */
const MAX_METADATA_KEYS = 50;

export interface DatasetListRequest {
  organizationId: string;
  datasetId: string;
  filter: FilterNode | null;
  sort: ListSort;
  paging: Paging;
  /** The dataset's log_count, read with it: the count of an unfiltered list. */
  logCount: number;
}

export function filteredDatasetLogs(
  db: Kysely<Database>,
  dialect: DialectName,
  organizationId: string,
  datasetId: string,
  filter: FilterNode | null,
): DatasetLogsQuery {
  let query = db.selectFrom('dataset_logs').where('dataset_logs.dataset_id', '=', datasetId);
  if (filter) {
    const sideTableScope = { column: 'dataset_id', value: datasetId };
    query = query.where(
      compileFilter({ dialect, registry: DATASET_LOG_FIELDS, organizationId, sideTableScope }, filter),
    );
  }
  return query;
}

export async function listDatasetLogs(
  db: Kysely<Database>,
  dialect: DialectName,
  request: DatasetListRequest,
): Promise<{ count: number; items: DatasetLogItem[] }> {
  const { organizationId, datasetId, filter, sort, paging } = request;
  const base = () => filteredDatasetLogs(db, dialect, organizationId, datasetId, filter);
  const dir = sort.descending ? sql`desc` : sql`asc`;
  // Sorts are by columns only here (the registry has no scores); ties break by id the same way.
  const column = sort.kind === 'column' ? sort.column : 'id';
  // Text in byte order on PostgreSQL as on SQLite: the same order on both, and compared with memcmp
  // rather than the locale's rules (a sort by model took 20% longer).
  const text = DATASET_LOG_FIELDS.fields.get(sort.kind === 'column' ? sort.name : '')?.type === 'string';
  const collate = text && dialect === 'postgres' ? sql` collate "C"` : sql``;
  const limit = paging.pageSize;
  const offset = pageOffset(paging);
  let pageIds = () => {
    const ordered = base()
      .select('dataset_logs.id')
      .orderBy(sql`${sql.ref(`dataset_logs.${column}`)}${collate} ${dir}`);
    return (column === 'id' ? ordered : ordered.orderBy(sql`dataset_logs.id ${dir}`))
      .limit(limit)
      .offset(offset)
      .execute();
  };
  if (sort.descending && column !== 'id' && column !== 'timestamp' && !DATASET_LOG_INDEXED_SORTS.includes(column)) {
    // Both databases keep the best rows of a sorted page in a heap, reading the list index in id
    // order: a descending sort then finds each new row (an equal value and a higher id, or a value
    // that grows with the id) better than the last and reorders the heap for nearly every row. Fed
    // newest first, it rejects them at a glance: about twice as fast (bench/README.md, datasets).
    // LIMIT -1 (SQLite) and OFFSET 0 (PostgreSQL) keep the planner from merging the inner query, and
    // with it the order, away.
    const inner = base()
      .select(['dataset_logs.id', sql.ref(`dataset_logs.${column}`).as('k')])
      .orderBy('dataset_logs.id', 'desc');
    const newestFirst = (dialect === 'sqlite' ? inner.limit(-1) : inner.offset(0)).as('s');
    pageIds = () =>
      db
        .selectFrom(newestFirst)
        .select('s.id')
        .orderBy(sql`s.k${collate} desc`)
        .orderBy(sql`s.id desc`)
        .limit(limit)
        .offset(offset)
        .execute();
  }
  // Deferred join: the page's ids come from the covering index, then only their rows are read.
  const [count, page] = await Promise.all([
    // Unfiltered, the count is the dataset's log_count, recounted by every write.
    filter === null
      ? request.logCount
      : base()
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
          .then((r) => Number(r.n)),
    pageIds(),
  ]);
  const ids = page.map((r) => Number(r.id));
  if (ids.length === 0) return { count, items: [] };
  const [rows, scores] = await Promise.all([pageRows(db, ids), scoresOfDatasetLogs(db, ids)]);
  const byId = new Map(rows.map((fetched) => [Number(fetched.row.id), fetched]));
  const items = ids
    .map((id) => byId.get(id))
    .filter((fetched) => fetched !== undefined)
    .map(({ row, truncated }) => presentDatasetLog(row, scores.get(Number(row.id)) ?? [], truncated));
  return { count, items };
}

/** Every column of dataset_logs but the large ones, which lists read as previews. */
const SMALL_COLUMNS = [
  'id',
  'dataset_id',
  'organization_id',
  'source_log_id',
  'source_log_unique_id',
  'environment',
  'log_type',
  'timestamp',
  'start_time',
  ...USAGE_COLUMNS,
  'model',
  'status_code',
  'status',
  'error_message',
  'error_code',
  'metadata',
  'annotation_status',
  'annotation_completed_by',
  'created_at',
  'updated_at',
] as const satisfies readonly Exclude<keyof DatasetLogsTable, DatasetLargeColumn>[];

/**
 * The page's rows with input and output cut to LIST_PREVIEW_CHARS, as the request-log list reads them:
 * a dataset log may hold megabytes of each, and a page of them must stay small whatever its size.
 */
async function pageRows(db: Kysely<Database>, ids: readonly number[]) {
  const rows = await db
    .selectFrom('dataset_logs')
    .select(SMALL_COLUMNS)
    .select(
      DATASET_LARGE_COLUMNS.map((c) => sql<string | null>`substr(${sql.ref(c)}, 1, ${LIST_PREVIEW_CHARS + 1})`.as(c)),
    )
    .where('id', 'in', ids)
    .execute();
  return rows.map((row) => {
    const truncated = new Set<DatasetLargeColumn>();
    for (const column of DATASET_LARGE_COLUMNS) {
      const value = row[column];
      if (value !== null && value.length > LIST_PREVIEW_CHARS) {
        truncated.add(column);
        row[column] = value.slice(0, LIST_PREVIEW_CHARS);
      }
    }
    return { row, truncated };
  });
}

type Tally = Map<string | number, number>;

/** The most frequent values first (ties by value), at most MAX_VALUE_CHOICES. */
function topChoices(tally: Tally) {
  return [...tally]
    .sort(([va, a], [vb, b]) => b - a || (va < vb ? -1 : va > vb ? 1 : 0))
    .slice(0, MAX_VALUE_CHOICES)
    .map(([value, count]) => ({ name: String(value), value, count }));
}

const add = (tally: Tally, value: string | number, count: number) => tally.set(value, (tally.get(value) ?? 0) + count);

/**
 * filter_options over the whole dataset (not the call's filters), most frequent values first. The
 * counts run side by side (on SQLite's reader threads, or the PostgreSQL pool): one per column with
 * choices, over the list index, and one over the metadata index.
 */
export async function datasetFilterOptions(
  db: Kysely<Database>,
  datasetId: string,
): Promise<Record<string, FilterOption>> {
  const fields = optionFields(DATASET_LOG_FIELDS);
  const columnCounts = (column: string) =>
    db
      .selectFrom('dataset_logs')
      .select([sql.ref<string | number>(column).as('value'), (eb) => eb.fn.countAll<number>().as('n')])
      .where('dataset_id', '=', datasetId)
      .groupBy(sql.ref(column))
      .execute();
  const metadataCounts = db
    .selectFrom('dataset_log_metadata')
    .select(['key', 'value_text', (eb) => eb.fn.countAll<number>().as('n')])
    .where('dataset_id', '=', datasetId)
    .groupBy(['key', 'value_text'])
    .execute();
  const [pairs, ...columns] = await Promise.all([
    metadataCounts,
    ...fields.map((def) => (def.choices ? columnCounts(def.column) : Promise.resolve([]))),
  ]);
  const options: Record<string, FilterOption> = {};
  fields.forEach((def, i) => {
    const tally: Tally = new Map(
      columns[i].map((r) => [def.type === 'integer' ? Number(r.value) : r.value, Number(r.n)]),
    );
    options[def.name] = fieldOption(def, topChoices(tally));
  });
  const byKey = new Map<string, Tally>();
  for (const { key, value_text, n } of pairs) {
    if (!byKey.has(key)) byKey.set(key, new Map());
    add(byKey.get(key)!, value_text, Number(n));
  }
  const total = (tally: Tally) => [...tally.values()].reduce((sum, n) => sum + n, 0);
  const keys = [...byKey]
    .map(([key, tally]) => ({ key, tally, count: total(tally) }))
    .sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : 1))
    .slice(0, MAX_METADATA_KEYS);
  for (const { key, tally } of keys) options[`metadata__${key}`] = metadataOption(key, topChoices(tally));
  return options;
}
