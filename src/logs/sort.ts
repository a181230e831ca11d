/** sort_by for the request-log list (docs/api.md "Listing logs"): ties break by id in the same direction, nulls last. */
import { AppError } from '../errors.js';
import { hasNul } from '../filters/limits.js';

export type LogSort =
  { kind: 'column'; column: string; descending: boolean } | { kind: 'score'; evaluatorId: string; descending: boolean };

/** Sortable names → log columns (a Map: `sort_by=constructor` must not find Object.prototype's). */
const SORT_COLUMNS: ReadonlyMap<string, string> = new Map([
  ['id', 'id'],
  ['timestamp', 'timestamp'],
  ['cost', 'cost'],
  ['time_to_first_token', 'time_to_first_token'],
  ['latency', 'latency'],
  ['prompt_tokens', 'prompt_tokens'],
  ['completion_tokens', 'completion_tokens'],
  ['all_tokens', 'total_request_tokens'],
]);

/** The names sort_by takes (besides scores__<evaluator_id>). */
export const SORTABLE = [...SORT_COLUMNS.keys()];

export function parseLogSort(raw: string | undefined): LogSort {
  const value = (raw ?? '-id').trim() || '-id';
  const descending = value.startsWith('-');
  const name = descending ? value.slice(1) : value;
  if (name.startsWith('scores__') && name.length > 'scores__'.length && !hasNul(name)) {
    return { kind: 'score', evaluatorId: name.slice('scores__'.length), descending };
  }
  const column = SORT_COLUMNS.get(name);
  if (!column) {
    throw new AppError(
      400,
      'invalid_parameter',
      `sort_by '${value}' is not allowed; allowed: ${SORTABLE.join(', ')}, scores__<evaluator_id>, each optionally prefixed by -.`,
      'sort_by',
    );
  }
  return { kind: 'column', column, descending };
}
