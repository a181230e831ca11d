/**
 * The Sessions page's calls (docs/api.md "Sessions"): a page of sessions of the list's window and
 * filters (POST /api/sessions/, filters in the body as the list takes them), one session's totals (the
 * same call narrowed to its thread_identifier), and its calls, oldest first, from the log list with only
 * what the timeline shows: no prompt (a coding agent's holds the whole conversation, every call) — a
 * call's own messages are read when it is opened.
 */
import { call, type LogItem, metadataFiltersOf, type Paged, send } from './api';
import { callsRequest, sessionsRequest, sessionState, type Session, type SessionsView } from './lib/sessions';

/** A page of sessions, and the URL quick-filter names gatelog read as metadata keys (as the explorer's). */
export type SessionsPage = Paged<Session> & { metadataFilters: string[] };

export async function listSessions(
  key: string,
  view: Pick<SessionsView, 'state' | 'sort'>,
  now: number,
  pageSize: number,
): Promise<SessionsPage> {
  const { query, body } = sessionsRequest(view, now, pageSize);
  const answer = await send<Paged<Session>>(key, 'POST', `sessions/${query}`, body);
  return { ...answer.body, metadataFilters: metadataFiltersOf(answer.headers) };
}

/** One session's totals over the list's window and filters; null when none of its calls match. */
export async function sessionTotals(key: string, view: SessionsView & { session: string }, now: number) {
  const page = await listSessions(key, { ...view, state: sessionState(view.state, view.session) }, now, 1);
  return page.results[0] ?? null;
}

/** What a call of the timeline shows: its figures, its one-line prompt, and its answer whole. */
const CALL_FIELDS = [
  'timestamp',
  'start_time',
  'log_type',
  'status_code',
  'status',
  'model',
  'latency',
  'cost',
  'prompt_tokens',
  'completion_tokens',
  'input_preview',
  'output_preview',
  'completion_message',
  'error_message',
  'organization_key__name',
];

export type SessionCall = Pick<
  LogItem,
  | 'unique_id'
  | 'timestamp'
  | 'log_type'
  | 'status_code'
  | 'status'
  | 'model'
  | 'latency'
  | 'cost'
  | 'prompt_tokens'
  | 'completion_tokens'
  | 'input_preview'
  | 'output_preview'
  | 'error_message'
> & { start_time?: string | null; completion_message?: unknown; organization_key__name?: string };

/** Calls a page of the timeline. */
export const CALLS_PAGE_SIZE = 100;

/** Page `page` of a session's calls, oldest first (no count: the totals say how many). */
export async function sessionCalls(key: string, view: SessionsView & { session: string }, now: number, page: number) {
  const { query, body } = callsRequest(view.state, view.session, now, page, CALLS_PAGE_SIZE);
  const extra = `&count=false&include_fields=${CALL_FIELDS.join(',')}`;
  return call<{ results: SessionCall[]; next: string | null }>(key, 'POST', `request-logs/list/${query}${extra}`, body);
}
