/**
 * The dataset-log list's field registry (docs/api.md "Dataset logs"): the second list the filter
 * language serves. Its metadata__ filters read dataset_log_metadata; it has no time range of its own
 * (timestamp and start_time are plain filters) and sorts by order_by (alias sort_by).
 */
import { DATASET_LOG_SORT_COLUMNS } from '../db/migrations/0010_datasets.js';
import { buildRegistry } from '../filters/registry.js';

const S = { choices: true, option: true };
const N = { option: true };

export const DATASET_LOG_FIELDS = buildRegistry(
  'dataset_logs',
  [
    ['model', 'string', S],
    ['status_code', 'integer', S],
    ['status', 'string', S],
    ['environment', 'string', S],
    ['annotation_status', 'string', S],
    ['log_type', 'string', S],
    ['prompt_tokens', 'integer', N],
    ['completion_tokens', 'integer', N],
    ['total_request_tokens', 'integer', N],
    ['cost', 'number', N],
    ['latency', 'number', N],
    ['timestamp', 'datetime'],
    ['start_time', 'datetime'],
  ],
  {
    sideTables: { metadata: 'dataset_log_metadata', scores: null },
    sortable: [['unique_id', 'id'], ...DATASET_LOG_SORT_COLUMNS.map((c): [string, string] => [c, c])],
    defaultSort: 'unique_id',
    sortParams: ['order_by', 'sort_by'],
    params: ['fetch_filters'],
  },
);

/** The page size of the dataset-log list unless told otherwise. */
export const DATASET_LOG_PAGE_SIZE = 50;
