/**
 * The Sessions page's state and reading (pure: the browser code and the node tests share it). Its URL
 * is the explorer's window, filters, sort and page after `v=sessions`, and the open session's
 * thread_identifier as `session`:
 *
 *   ?v=sessions&range=24h&at=…&filters=[…]&sort=cost&page=2&session=<thread_identifier>
 *
 * The list is GET|POST /api/sessions/ (docs/api.md "Sessions") with the list's window and filters; a
 * session's calls are the log list of the same window and filters, its thread_identifier added, oldest
 * first — so the row, the totals over the timeline, the timeline and the explorer link count the same calls.
 */
import {
  DEFAULT_SORT,
  formatViewState,
  listRequest,
  parseViewState,
  type Condition,
  type ViewState,
} from './view-state.js';

/** A session as GET /api/sessions/ answers it. */
export interface Session {
  thread_identifier: string;
  first_seen: string;
  last_seen: string;
  calls: number;
  errors: number;
  cost: number;
  prompt_tokens: number;
  completion_tokens: number;
  models: string[];
  /** The names of the keys that made its calls (organization_key__name). */
  keys: string[];
  customers: string[];
}

/** The orders the API sorts sessions in: by last call or by cost, `-` descending. */
export const SESSION_SORTS = ['-last_seen', 'last_seen', '-cost', 'cost'] as const;
export type SessionSort = (typeof SESSION_SORTS)[number];
/** The API's default, the latest active first: left out of the URL as the explorer's default sort is. */
export const DEFAULT_SESSION_SORT: SessionSort = '-last_seen';

/** Sessions a page (the API's default page size). */
export const SESSION_PAGE_SIZE = 50;

/** What the Sessions page shows: the list's state, and the session opened (null: the list). */
export interface SessionsView {
  state: ViewState;
  sort: SessionSort;
  session: string | null;
}

const isSessionSort = (text: string): text is SessionSort => (SESSION_SORTS as readonly string[]).includes(text);

/** The page's state from its query string; a sort the sessions do not take reads as the default. */
export function parseSessionsView(search: string): SessionsView {
  const state = parseViewState(search);
  return {
    state,
    sort: isSessionSort(state.sort) ? state.sort : DEFAULT_SESSION_SORT,
    session: new URLSearchParams(search).get('session') || null,
  };
}

/** The page's query string: `v=sessions`, the list's state, and the open session when there is one. */
export function sessionsQuery(
  state: Pick<ViewState, 'window' | 'conditions' | 'quick' | 'page'>,
  sort: SessionSort,
  session: string | null = null,
): string {
  const rest = formatViewState({
    window: state.window,
    conditions: state.conditions,
    sort: sort === DEFAULT_SESSION_SORT ? DEFAULT_SORT : sort,
    page: state.page,
    log: null,
    ...(state.quick ? { quick: state.quick } : {}),
  });
  const q = new URLSearchParams(rest);
  if (session !== null) q.set('session', session);
  const text = q.toString();
  return `?v=sessions${text === '' ? '' : `&${text}`}`;
}

/** The list's call: its query string (window, page, sort, URL quick filters) and body (its filters). */
export function sessionsRequest(view: Pick<SessionsView, 'state' | 'sort'>, now: number, pageSize: number) {
  return listRequest({ ...view.state, sort: view.sort, log: null }, now, pageSize);
}

/** The condition that keeps one session's calls. */
export const sessionCondition = (id: string): Condition => ({ field: 'thread_identifier', operator: '', values: [id] });

/** A URL quick filter on thread_identifier (`thread_identifier=…`, `thread_identifier[operator]=…`). */
const onThread = ([name]: [string, string]) => name === 'thread_identifier' || name.startsWith('thread_identifier[');

/**
 * The list's state narrowed to one session: its filters with the session's, replacing any other on
 * thread_identifier — a URL quick filter's too, which the API would keep over the session's body filter.
 */
export function sessionState(state: ViewState, id: string): ViewState {
  const { quick, ...rest } = state;
  const kept = quick?.filter((q) => !onThread(q)) ?? [];
  return {
    ...rest,
    conditions: [...state.conditions.filter((c) => c.field !== 'thread_identifier'), sessionCondition(id)],
    page: 1,
    log: null,
    ...(kept.length > 0 ? { quick: kept } : {}),
  };
}

/** A session's calls a page, oldest first, from its row's place (1-based page). */
export function callsRequest(state: ViewState, id: string, now: number, page: number, pageSize: number) {
  return listRequest({ ...sessionState(state, id), sort: 'timestamp', page }, now, pageSize);
}

/** A duration to read: "850 ms", "42 s", "12 min 5 s", "3 h 20 min", "2 d 4 h". */
export function durationText(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 === 0 ? `${m} min` : `${m} min ${s % 60} s`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 === 0 ? `${h} h` : `${h} h ${m % 60} min`;
  const d = Math.floor(h / 24);
  return h % 24 === 0 ? `${d} d` : `${d} d ${h % 24} h`;
}

/** A session's duration: from its first call to its last. */
export const sessionDuration = (s: Pick<Session, 'first_seen' | 'last_seen'>): number =>
  Date.parse(s.last_seen) - Date.parse(s.first_seen);

/** Who a key is to a reader: its owner's name (or email) when it has an owner, else its name. */
export type OwnerOf = (keyName: string) => string | null;

/** The developers of a session: each key's owner, else the key's name; each once, in the keys' order. */
export function developers(keys: readonly string[], ownerOf: OwnerOf): string[] {
  return [...new Set(keys.map((k) => ownerOf(k) ?? k))];
}
