/**
 * The UI's calls: the same public JSON API a user's script makes, with the API key the user signed in
 * with. An error answer keeps the API's own message (the one envelope: error.code and error.message).
 */
import { listRequest, type ViewState } from './lib/view-state';

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
  prompt_tokens: number;
  completion_tokens: number;
  cost: number;
  latency: number;
  time_to_first_token: number | null;
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
  count: number;
  results: LogItem[];
  filter_options?: Record<string, FilterOption>;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

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
const apiRoot = (): string =>
  new URL(document.querySelector<HTMLMetaElement>('meta[name="gatelog-api-root"]')?.content ?? '../api/', location.href)
    .href;

async function call<T>(key: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(new URL(path, apiRoot()), {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const parsed = text === '' ? null : (JSON.parse(text) as unknown);
  if (!res.ok) {
    const error = (parsed as { error?: { code?: string; message?: string } } | null)?.error;
    throw new ApiError(res.status, error?.code ?? 'error', error?.message ?? `The API answered ${res.status}.`);
  }
  return parsed as T;
}

export const PAGE_SIZE = 50;

export function listLogs(key: string, state: ViewState, now: number, withOptions: boolean): Promise<LogPage> {
  const { query, body } = listRequest(state, now, PAGE_SIZE);
  return call<LogPage>(key, 'POST', `request-logs/list/${query}${withOptions ? '&fetch_filters=true' : ''}`, body);
}

export const getLog = (key: string, id: string) => call<LogItem>(key, 'GET', `request-logs/${encodeURIComponent(id)}/`);

/** Checks a key by the cheapest authenticated call there is. */
export const checkKey = (key: string) =>
  call<LogPage>(key, 'GET', `request-logs/list/?page_size=1&start_time=${new Date(Date.now() - 60_000).toISOString()}`);
