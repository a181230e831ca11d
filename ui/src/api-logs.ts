/**
 * The explorer's list calls, split so that rows come first (docs/api.md "Keyset paging"): a page of
 * rows asked for without its count (count=false), then, apart, the count and the filter options. A page
 * after a known place is read by its cursor, so paging on never repeats or skips a log while new ones
 * arrive; without one (a reload of page 3, a sort a cursor cannot follow) by its page number.
 */
import { call, listLogs, type ListedPage, type LogPage } from './api';
import { FILTER_FIELDS } from './lib/filter-fields';
import { listRequest, quickAsConditions, type ViewState } from './lib/view-state';

export interface RowsPage extends ListedPage {
  next_cursor: string | null;
  next: string | null;
}

/** Rows only: `size` logs from the state's page, or after `cursor` when one is known. */
export async function listRows(
  key: string,
  state: ViewState,
  now: number,
  size: number,
  cursor: string | null,
): Promise<RowsPage> {
  const extra = `&count=false${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
  return (await listLogs(key, state, now, false, { size, extra })) as RowsPage;
}

/** The count of a state's matches, and its filter options: the slow part, asked for apart. */
export async function countLogs(key: string, state: ViewState, now: number): Promise<LogPage> {
  const { query, body } = listRequest({ ...state, page: 1 }, now, 1);
  return call<LogPage>(key, 'POST', `request-logs/list/${query}&include_fields=unique_id&fetch_filters=true`, body);
}

/**
 * The body filters of a state, its URL quick filters folded in (the URL's win, as in a list): what a
 * dataset made or filled from the explorer's filter copies.
 */
function datasetScope(state: ViewState, now: number) {
  const { query, body } = listRequest({ ...state, quick: undefined }, now, 1);
  const q = new URLSearchParams(query);
  const filters = { ...body.filters };
  for (const c of quickAsConditions(state.quick ?? [], FILTER_FIELDS)) {
    filters[c.field] = { operator: c.operator, value: c.values };
  }
  return { start_time: q.get('start_time'), end_time: q.get('end_time'), filters };
}

/** Every log a state matches copied into an existing dataset (POST /api/datasets/{id}/logs/bulk/). */
export const addMatchingToDataset = (key: string, datasetId: string, state: ViewState, now: number) =>
  call<{ added_count: number }>(
    key,
    'POST',
    `datasets/${encodeURIComponent(datasetId)}/logs/bulk/`,
    datasetScope(state, now),
  );

/** How many logs a state matches, the count alone (one id read, no filter options). */
export async function countMatches(key: string, state: ViewState, now: number): Promise<number | null> {
  const { query, body } = listRequest({ ...state, page: 1 }, now, 1);
  return (await call<LogPage>(key, 'POST', `request-logs/list/${query}&include_fields=unique_id`, body)).count;
}
