/**
 * The UI's calls: the same public JSON API a user's script makes, with the API key the user signed in
 * with. An error answer keeps the API's own message (the one envelope: error.code and error.message).
 */
import { markDown, markUp } from './connection';
import { FILTER_FIELDS } from './lib/filter-fields';
import { listRequest, quickAsConditions, type ViewState } from './lib/view-state';

export interface LogItem {
  unique_id: string;
  timestamp: string;
  log_type: string;
  status_code: number;
  status: string;
  model: string;
  customer_identifier: string;
  input: string | null;
  output: string | null;
  /** One line each: what was written and what was answered (null: nothing to show, or a log from before). */
  input_preview?: string | null;
  output_preview?: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  /** Null when no price is known for the model (shown as unknown, never as $0). */
  cost: number | null;
  latency: number;
  time_to_first_token: number | null;
  error_message?: string | null;
  /** Why the call failed, as a code (model_not_allowed, rate_limited, the provider's…); null when it did not. */
  error_code?: string | null;
  metadata: Record<string, unknown>;
  scores: Record<string, { evaluator_name: string; score_value: number }>;
  truncated_fields?: string[];
  [field: string]: unknown;
}

export interface FilterOption {
  display_name: string;
  value_field_type: 'text' | 'number' | 'boolean' | 'datetime' | 'selection';
  operator_choices: { name: string; value: string }[];
  value_choices?: { name: string; value: string | number; count: number }[];
}

export interface LogPage {
  /** null when asked for without it (count=false, or a cursor). */
  count: number | null;
  results: LogItem[];
  filter_options?: Record<string, FilterOption>;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The input at fault as the API names it (error.param), e.g. "filters.modle". */
    readonly param: string | null = null,
    /** Whether a later try may succeed: gatelog did not answer, or answered "retry later". */
    readonly retryable = false,
  ) {
    super(message);
  }
}

/** Whether an error is gatelog not answering (or busy): what is shown is kept and the call retried. */
export const isRetryable = (err: unknown): boolean => err instanceof ApiError && err.retryable;

const KEY_STORE = 'gatelog.apiKey';

export const savedKey = (): string | null => sessionStorage.getItem(KEY_STORE) ?? localStorage.getItem(KEY_STORE);

export function saveKey(key: string, remember: boolean): void {
  sessionStorage.setItem(KEY_STORE, key);
  if (remember) localStorage.setItem(KEY_STORE, key);
}

export function forgetKey(): void {
  sessionStorage.removeItem(KEY_STORE);
  localStorage.removeItem(KEY_STORE);
}

/**
 * The API's root, relative to this page as gatelog wrote it into the page (the UI may be served under
 * any path, behind a reverse proxy that adds a prefix).
 */
export const apiRoot = (): string =>
  new URL(document.querySelector<HTMLMetaElement>('meta[name="gatelog-api-root"]')?.content ?? '../api/', location.href)
    .href;

/** An answer to a call: its parsed body and headers. */
interface Answer<T> {
  body: T;
  headers: Headers;
}

export async function send<T>(key: string, method: string, path: string, body?: unknown): Promise<Answer<T>> {
  let res: Response;
  try {
    res = await fetch(new URL(path, apiRoot()), {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    // No answer at all ("Failed to fetch"): gatelog is stopped, restarting or out of reach.
    markDown(null);
    throw new ApiError(0, 'unreachable', 'gatelog is not answering.', null, true);
  }
  const text = await res.text().catch(() => '');
  let parsed: unknown = null;
  try {
    parsed = text === '' ? null : (JSON.parse(text) as unknown);
  } catch {
    // Not JSON: a reverse proxy's own error page, for one.
  }
  if (res.status === 502 || res.status === 504 || (res.status === 503 && parsed === null)) {
    markDown(null);
    throw new ApiError(res.status, 'unreachable', 'gatelog is not answering.', null, true);
  }
  // A list past its time budget is a 503 too, but asking again the same would fail the same.
  const code = (parsed as { error?: { code?: string } } | null)?.error?.code;
  if (res.status === 503 && code !== 'query_timeout') {
    const message = (parsed as { error?: { message?: string } } | null)?.error?.message ?? null;
    markDown(message);
    throw new ApiError(503, 'unavailable', message ?? 'gatelog is unavailable.', null, true);
  }
  markUp();
  if (!res.ok) {
    const answer = parsed as {
      detail?: string;
      error?: { code?: string; message?: string; param?: string | null };
    } | null;
    const error = answer?.error;
    throw new ApiError(
      res.status,
      error?.code ?? 'error',
      error?.message ?? answer?.detail ?? `The API answered ${res.status}.`,
      error?.param ?? null,
    );
  }
  return { body: parsed as T, headers: res.headers };
}

export const call = async <T>(key: string, method: string, path: string, body?: unknown): Promise<T> =>
  (await send<T>(key, method, path, body)).body;

export const PAGE_SIZE = 50;

export interface ListedPage extends LogPage {
  /**
   * URL quick-filter names the server read as metadata keys (its X-Gatelog-Metadata-Filters header):
   * `?modle=x` filters metadata.modle, which a typo makes easy to miss.
   */
  metadataFilters: string[];
}

export async function listLogs(
  key: string,
  state: ViewState,
  now: number,
  withOptions: boolean,
  more: { size: number; extra: string } = { size: PAGE_SIZE, extra: '' },
): Promise<ListedPage> {
  const { query, body } = listRequest(state, now, more.size);
  const answer = await send<LogPage>(
    key,
    'POST',
    `request-logs/list/${query}${withOptions ? '&fetch_filters=true' : ''}${more.extra}`,
    body,
  );
  return { ...answer.body, metadataFilters: metadataFiltersOf(answer.headers) };
}

/** The URL quick-filter names a list-like answer says it read as metadata keys (X-Gatelog-Metadata-Filters). */
export function metadataFiltersOf(headers: Headers): string[] {
  const header = headers.get('x-gatelog-metadata-filters') ?? '';
  return header
    .split(',')
    .filter(Boolean)
    .map((name) => {
      // Each name is percent-encoded, so that a comma in a name cannot split it.
      try {
        return decodeURIComponent(name);
      } catch {
        return name;
      }
    });
}

export const getLog = (key: string, id: string) => call<LogItem>(key, 'GET', `request-logs/${encodeURIComponent(id)}/`);

/** Checks a key by the cheapest authenticated call there is. */
export const checkKey = (key: string) =>
  call<LogPage>(key, 'GET', `request-logs/list/?page_size=1&start_time=${new Date(Date.now() - 60_000).toISOString()}`);

export interface Dataset {
  id: string;
  name: string;
  description: string;
  type: string;
  status: string;
  log_count: number;
  completed_annotation_count: number;
  created_at: string;
  updated_at: string;
}

export interface DatasetLog {
  id: string;
  source_log_unique_id: string | null;
  log_type: string;
  model: string;
  status_code: number;
  status: string;
  error_message?: string | null;
  environment: string;
  prompt_tokens: number;
  completion_tokens: number;
  /** null: no price is known for the model. */
  cost: number | null;
  latency: number;
  timestamp: string;
  prompt: string;
  completion: string;
  input: string | null;
  output: string | null;
  metadata: Record<string, unknown>;
  annotation_status: string;
  scores: { evaluator_id: string; evaluator_name: string; score_value: number }[];
  /** Lists only: input and output cut to a preview, prompt and completion empty. */
  truncated_fields?: string[];
}

export interface Evaluator {
  id: string;
  name: string;
  evaluator_slug: string;
  /** Who scores with it: a person (human), a model (llm) or a program (code). */
  type: 'human' | 'llm' | 'code';
  score_value_type: 'numerical' | 'boolean';
  description: string;
}

export interface Paged<T> {
  count: number;
  results: T[];
}

export const DATASET_PAGE_SIZE = 50;

export const listDatasets = (key: string, page: number) =>
  call<Paged<Dataset>>(key, 'GET', `datasets/?page=${page}&page_size=${DATASET_PAGE_SIZE}`);

export const getDataset = (key: string, id: string) => call<Dataset>(key, 'GET', `datasets/${encodeURIComponent(id)}/`);

/** A dataset holding the logs of a list state: its time window and filters, sampled. */
export function createDatasetFromList(
  key: string,
  name: string,
  state: ViewState,
  now: number,
  sampling: number,
): Promise<Dataset> {
  const { query, body } = listRequest({ ...state, quick: undefined }, now, 1);
  const q = new URLSearchParams(query);
  // The link's URL quick filters hold for the dataset too: as body filters (the URL's win, as in a list).
  const filters = { ...body.filters };
  for (const c of quickAsConditions(state.quick ?? [], FILTER_FIELDS)) {
    filters[c.field] = { operator: c.operator, value: c.values };
  }
  return call<Dataset>(key, 'POST', 'datasets/', {
    name,
    start_time: q.get('start_time'),
    end_time: q.get('end_time'),
    initial_log_filters: filters,
    sampling,
  });
}

export const listDatasetLogs = (key: string, id: string, page: number, pageSize = DATASET_PAGE_SIZE) =>
  call<Paged<DatasetLog>>(
    key,
    'GET',
    `datasets/${encodeURIComponent(id)}/logs/list/?page=${page}&page_size=${pageSize}`,
  );

/**
 * The n-th log of a dataset, whole: a list item holds previews of a large input or output (and then
 * no prompt or completion), so such a log is read again by its id.
 */
export async function datasetLogAt(key: string, id: string, n: number): Promise<Paged<DatasetLog>> {
  const page = await listDatasetLogs(key, id, n, 1);
  const first = page.results[0];
  if (!first?.truncated_fields?.length) return page;
  const whole = await call<DatasetLog>(
    key,
    'GET',
    `datasets/${encodeURIComponent(id)}/logs/${encodeURIComponent(first.id)}/`,
  );
  return { ...page, results: [whole] };
}

export const listEvaluators = (key: string) => call<Paged<Evaluator>>(key, 'GET', 'evaluators/?page_size=1000');

export const setAnnotationStatus = (key: string, datasetId: string, logId: string, status: string) =>
  call<DatasetLog>(key, 'PATCH', `datasets/${encodeURIComponent(datasetId)}/logs/${encodeURIComponent(logId)}/`, {
    annotation_status: status,
  });

export const scoreDatasetLog = (
  key: string,
  datasetId: string,
  logId: string,
  evaluator: Evaluator,
  value: number | boolean,
) =>
  call<unknown>(key, 'POST', `datasets/${encodeURIComponent(datasetId)}/logs/${encodeURIComponent(logId)}/scores/`, {
    evaluator_id: evaluator.id,
    ...(evaluator.score_value_type === 'boolean' ? { boolean_value: value } : { numerical_value: value }),
  });

/**
 * How many logs a dataset made from this state would draw from: a dataset copies the matching logs of
 * every environment (test keys' too), where the explorer lists production keys' logs by default.
 */
export async function countForDataset(key: string, state: ViewState, now: number): Promise<number> {
  const { query, body } = listRequest({ ...state, page: 1 }, now, 1);
  return (await call<LogPage>(key, 'POST', `request-logs/list/${query}&all_envs=true`, body)).count ?? 0;
}

/**
 * A single-use link (POST /api/request-logs/export/tokens/) to every log of a list state (not a page):
 * CSV of the given fields, or JSON Lines of every field. The browser follows it by itself — a plain GET,
 * no key in the URL — and saves the export to disk as it arrives, so the tab never holds the file.
 */
export async function exportLink(
  key: string,
  state: ViewState,
  now: number,
  format: 'csv' | 'jsonl',
  fields: readonly string[] | null,
): Promise<string> {
  const { query, body } = listRequest({ ...state, page: 1 }, now, 1);
  const q = new URLSearchParams(query);
  q.delete('page');
  q.delete('page_size');
  q.delete('sort_by');
  q.set('format', format);
  if (fields) q.set('fields', fields.join(','));
  const { token } = await call<{ token: string }>(key, 'POST', `request-logs/export/tokens/?${q.toString()}`, body);
  // Under the API root this page knows (a reverse proxy may add a prefix the server cannot see).
  return new URL(`request-logs/export/download/?token=${encodeURIComponent(token)}`, apiRoot()).href;
}

export interface SavedView {
  id: string;
  name: string;
  query: string;
  columns: string[];
}

export const listViews = (key: string) => call<Paged<SavedView>>(key, 'GET', 'views/?page_size=1000');

export const saveView = (key: string, view: Omit<SavedView, 'id'>) => call<SavedView>(key, 'POST', 'views/', view);

/** Copies these request logs into a dataset: an existing one (`datasetId`), or a new one named `name`. */
export async function addLogsToDataset(
  key: string,
  target: { datasetId: string } | { name: string },
  logIds: readonly string[],
): Promise<Dataset> {
  const dataset =
    'datasetId' in target
      ? await getDataset(key, target.datasetId)
      : await call<Dataset>(key, 'POST', 'datasets/', { name: target.name });
  await call<unknown>(key, 'POST', `datasets/${encodeURIComponent(dataset.id)}/logs/`, { log_ids: logIds });
  return dataset;
}
