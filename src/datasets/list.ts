/**
 * The dataset-log list (docs/api.md "Dataset logs"): one dataset's logs, filtered with the filter
 * language over DATASET_LOG_FIELDS, sorted, paged; filter_options counted over the whole dataset.
 */
import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type { DialectName } from '../db/connect.js';
import type { Database } from '../db/schema.js';
import { compileFilter } from '../filters/compile.js';
import { type FilterOption, fieldOption, MAX_VALUE_CHOICES, metadataOption, optionFields } from '../filters/options.js';
import type { ListSort } from '../filters/sort.js';
import type { FilterNode } from '../filters/types.js';
import { pageOffset, type Paging } from '../util/paging.js';
import { type DatasetLogItem, presentDatasetLog } from './dataset-log-item.js';
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
}

export function filteredDatasetLogs(
  db: Kysely<Database>,
  dialect: DialectName,
  organizationId: string,
  datasetId: string,
  filter: FilterNode | null,
): DatasetLogsQuery {
  let query = db.selectFrom('dataset_logs').where('dataset_logs.dataset_id', '=', datasetId);
  if (filter) query = query.where(compileFilter({ dialect, registry: DATASET_LOG_FIELDS, organizationId }, filter));
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
  const nulls = column === 'start_time' ? sql` nulls last` : sql``;
  let paged = base()
    .selectAll('dataset_logs')
    .orderBy(sql`${sql.ref(`dataset_logs.${column}`)} ${dir}${nulls}`);
  if (column !== 'id') paged = paged.orderBy(sql`dataset_logs.id ${dir}`);
  const [countRow, rows] = await Promise.all([
    base()
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow(),
    paged.limit(paging.pageSize).offset(pageOffset(paging)).execute(),
  ]);
  const scores = await scoresOfDatasetLogs(
    db,
    rows.map((r) => Number(r.id)),
  );
  return {
    count: Number(countRow.n),
    items: rows.map((row) => presentDatasetLog(row, scores.get(Number(row.id)) ?? [])),
  };
}

/** filter_options over the whole dataset (not the call's filters): most frequent values first. */
export async function datasetFilterOptions(
  db: Kysely<Database>,
  datasetId: string,
): Promise<Record<string, FilterOption>> {
  const options: Record<string, FilterOption> = {};
  for (const def of optionFields(DATASET_LOG_FIELDS)) {
    if (!def.choices) {
      options[def.name] = fieldOption(def, []);
      continue;
    }
    const column = sql.ref(`dataset_logs.${def.column}`);
    const rows = await db
      .selectFrom('dataset_logs')
      .select([column.as('value'), (eb) => eb.fn.countAll<number>().as('n')])
      .where('dataset_id', '=', datasetId)
      .groupBy(column)
      .orderBy(sql`count(*) desc`)
      .orderBy(column)
      .limit(MAX_VALUE_CHOICES)
      .execute();
    const choices = rows.map((r) => {
      const value = def.type === 'integer' ? Number(r.value) : String(r.value);
      return { name: String(value), value, count: Number(r.n) };
    });
    options[def.name] = fieldOption(def, choices);
  }
  const keys = await db
    .selectFrom('dataset_log_metadata as m')
    .innerJoin('dataset_logs as d', 'd.id', 'm.log_id')
    .select(['m.key', (eb) => eb.fn.countAll<number>().as('n')])
    .where('d.dataset_id', '=', datasetId)
    .groupBy('m.key')
    .orderBy(sql`count(*) desc`)
    .orderBy('m.key')
    .limit(MAX_METADATA_KEYS)
    .execute();
  for (const { key } of keys) {
    const values = await db
      .selectFrom('dataset_log_metadata as m')
      .innerJoin('dataset_logs as d', 'd.id', 'm.log_id')
      .select(['m.value_text', (eb) => eb.fn.countAll<number>().as('n')])
      .where('d.dataset_id', '=', datasetId)
      .where('m.key', '=', key)
      .groupBy('m.value_text')
      .orderBy(sql`count(*) desc`)
      .orderBy('m.value_text')
      .limit(MAX_VALUE_CHOICES)
      .execute();
    options[`metadata__${key}`] = metadataOption(
      key,
      values.map((v) => ({ name: v.value_text, value: v.value_text, count: Number(v.n) })),
    );
  }
  return options;
}
