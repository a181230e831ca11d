/**
 * The Sessions page (`?v=sessions`, lib/sessions.ts): an agent's or a conversation's calls — the logs
 * sharing a thread_identifier — as one row each: who (the keys' owners), which models, how many calls
 * and errors, what it cost, how long it ran, when it was last active; sorted by the server (last seen or
 * cost), a page at a time, over the explorer's time window and filters (the same picker and filter bar).
 * A row opens the session as a timeline of its calls (session-timeline.tsx), at its own URL.
 */
import { computed } from '@preact/signals';
import { useEffect, useState } from 'preact/hooks';
import { type ApiKey, keyOwners, ownerText } from '../api-keys';
import { listSessions } from '../api-sessions';
import { checkFields, refusalOf } from '../filter-refusal';
import type { Refusal } from '../lib/filter-fields';
import { costText } from '../lib/format';
import {
  developers,
  durationText,
  parseSessionsView,
  sessionDuration,
  SESSION_PAGE_SIZE,
  sessionsQuery,
  type OwnerOf,
  type Session,
  type SessionSort,
  type SessionsView,
} from '../lib/sessions';
import type { Condition, TimeWindow, ViewState } from '../lib/view-state';
import { go, search } from '../router';
import { useLoad } from '../use-load';
import { FilterBar } from './filter-bar';
import { Pager } from './pager';
import { SessionTimeline } from './session-timeline';
import { TimeText } from './time-text';
import { WindowPicker } from './window-picker';
import '../pages.css';
import '../sessions.css';

const view = computed(() => parseSessionsView(search.value));

/** A state to show: a relative window without its anchor gets one (now), as the explorer's does. */
const anchoredOf = (state: ViewState): boolean => state.window.kind === 'absolute' || state.window.at !== null;

export function Sessions({ apiKey }: { apiKey: string }) {
  const v = view.value;
  const windowKey = JSON.stringify(v.state.window);
  // A relative window is anchored once: pages and the open session read the same stretch of time.
  useEffect(() => {
    const { window } = v.state;
    if (window.kind === 'relative' && !window.at) {
      go(sessionsQuery({ ...v.state, window: { ...window, at: new Date().toISOString() } }, v.sort, v.session), true);
    }
  }, [windowKey]);
  // Keys read as the developers who own them; without the owners (an error) the keys' names alone.
  const [owners] = useLoad(() => keyOwners(apiKey).catch(() => new Map<string, ApiKey['owner']>()), [apiKey]);
  const ownerOf: OwnerOf = (name) => {
    const owner = owners.state === 'done' ? owners.value.get(name) : undefined;
    return owner ? ownerText(owner) : null;
  };
  if (!anchoredOf(v.state)) return <p class="summary">Loading…</p>;
  if (v.session !== null)
    return <SessionTimeline apiKey={apiKey} view={{ ...v, session: v.session }} ownerOf={ownerOf} />;
  return <SessionList apiKey={apiKey} view={v} ownerOf={ownerOf} />;
}

function SessionList({ apiKey, view: v, ownerOf }: { apiKey: string; view: SessionsView; ownerOf: OwnerOf }) {
  const { state, sort } = v;
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const listKey = JSON.stringify([state.window, state.conditions, state.quick ?? [], sort, state.page]);
  const [loaded] = useLoad(() => listSessions(apiKey, v, Date.now(), SESSION_PAGE_SIZE), [listKey, apiKey]);
  const show = (next: Partial<ViewState>, nextSort: SessionSort = sort) =>
    go(sessionsQuery({ ...state, page: 1, ...next }, nextSort));

  /** New filters, applied once gatelog lists them: a filter it refuses is said so, and not applied. */
  const applyFilters = async (conditions: Condition[], quick: ViewState['quick']): Promise<boolean> => {
    const local = checkFields(conditions);
    if (local) {
      setRefusal(local);
      return false;
    }
    const next = { ...v, state: { ...state, conditions, quick, page: 1 } };
    try {
      await listSessions(apiKey, next, Date.now(), 1);
    } catch (err) {
      const refused = refusalOf(err);
      if (refused) {
        setRefusal(refused);
        return false;
      }
      // Not the filters' fault (gatelog is down, say): applied, and loaded (and retried) as any list.
    }
    setRefusal(null);
    show({ conditions, quick });
    return true;
  };

  const page = loaded.state === 'done' ? loaded.value : null;
  const filtered = state.conditions.length > 0 || state.quick !== undefined;
  const first = (state.page - 1) * SESSION_PAGE_SIZE;
  return (
    <section class="sessions" aria-label="Sessions">
      <div class="toolbar">
        <WindowPicker window={state.window} onChange={(window: TimeWindow) => show({ window })} />
      </div>
      <FilterBar
        conditions={state.conditions}
        options={{}}
        refusal={refusal}
        onChange={(conditions) => applyFilters(conditions, state.quick)}
        quick={state.quick ?? []}
        metadataNames={page?.metadataFilters ?? []}
        onQuickChange={(quick) => applyFilters(state.conditions, quick.length > 0 ? quick : undefined)}
      />
      {loaded.state === 'error' && (
        <p role="alert" class="error">
          The sessions could not be listed: {loaded.message}
        </p>
      )}
      <p class="summary" aria-live="polite">
        {loaded.state === 'loading' && 'Loading…'}
        {page &&
          (page.count === 0
            ? filtered
              ? 'No session matches these filters in this time window.'
              : 'No sessions in this time window: calls that carry a thread_identifier (a coding agent’s session header, or the logging API’s field) appear here.'
            : page.results.length === 0
              ? `Page ${state.page} is past the last page: ${page.count} ${page.count === 1 ? 'session' : 'sessions'} in all. `
              : `${first + 1}–${first + page.results.length} of ${page.count} ${page.count === 1 ? 'session' : 'sessions'}`)}
        {/* A page the sessions no longer reach (a link kept while they changed): the way back to them. */}
        {page && page.count > 0 && page.results.length === 0 && (
          <button type="button" class="link" onClick={() => show({ page: Math.ceil(page.count / SESSION_PAGE_SIZE) })}>
            Show the last page
          </button>
        )}
      </p>
      {page && page.results.length > 0 && (
        <SessionTable
          sessions={page.results}
          sort={sort}
          ownerOf={ownerOf}
          onSort={(next) => show({}, next)}
          open={(id) => sessionsQuery(state, sort, id)}
        />
      )}
      {page && (
        <Pager
          page={state.page}
          count={page.count}
          size={SESSION_PAGE_SIZE}
          onPage={(p) => {
            window.scrollTo(0, 0);
            show({ page: p });
          }}
        />
      )}
    </section>
  );
}

/** The sortable columns: the server sorts by them, latest or costliest first on the first click. */
const SORTABLE = { last_seen: 'Last seen', cost: 'Cost' } as const;

function SessionTable({
  sessions,
  sort,
  ownerOf,
  onSort,
  open,
}: {
  sessions: Session[];
  sort: SessionSort;
  ownerOf: OwnerOf;
  onSort(sort: SessionSort): void;
  /** The URL of a session opened. */
  open(id: string): string;
}) {
  const header = (column: keyof typeof SORTABLE, className: string) => {
    const by = sort.replace(/^-/, '');
    const direction = by === column ? (sort.startsWith('-') ? 'descending' : 'ascending') : undefined;
    const next = (direction === 'descending' ? column : `-${column}`) as SessionSort;
    return (
      <th scope="col" class={className} aria-sort={direction ?? 'none'}>
        <button type="button" onClick={() => onSort(next)}>
          {SORTABLE[column]}
          {direction === 'ascending' ? ' ▲' : direction === 'descending' ? ' ▼' : ''}
        </button>
      </th>
    );
  };
  return (
    <div class="logs-box">
      <table class="logs sessions" aria-label="Sessions">
        <colgroup>
          <col class="s-id" />
          <col class="s-who" />
          <col class="s-models" />
          <col class="s-calls" />
          <col class="s-errors" />
          <col class="c-cost" />
          <col class="s-duration" />
          <col class="c-time" />
        </colgroup>
        <thead>
          <tr>
            <th scope="col">Session</th>
            <th scope="col">Developer</th>
            <th scope="col">Models</th>
            <th scope="col" class="num">
              Calls
            </th>
            <th scope="col" class="num">
              Errors
            </th>
            {header('cost', 'num')}
            <th scope="col" class="num">
              Duration
            </th>
            {header('last_seen', 's-last')}
          </tr>
        </thead>
        <tbody>
          {sessions.map((s) => {
            const href = open(s.thread_identifier);
            const who = developers(s.keys, ownerOf).join(', ');
            return (
              <tr key={s.thread_identifier} onClick={() => go(href)}>
                <td class="s-id" data-label="Session" title={s.thread_identifier}>
                  <a
                    href={href}
                    onClick={(e) => {
                      e.preventDefault();
                      e.stopPropagation();
                      go(href);
                    }}
                  >
                    {s.thread_identifier}
                  </a>
                </td>
                <td class="s-who" data-label="Developer" title={s.keys.join(', ')}>
                  {who || '—'}
                </td>
                <td class="s-models" data-label="Models" title={s.models.join(', ')}>
                  {s.models.join(', ') || '—'}
                </td>
                <td class="num" data-label="Calls">
                  {s.calls.toLocaleString('en-US')}
                </td>
                <td class={`num${s.errors > 0 ? ' status bad' : ''}`} data-label="Errors">
                  {s.errors.toLocaleString('en-US')}
                </td>
                <td class="num" data-label="Cost">
                  {costText(s.cost)}
                </td>
                <td class="num" data-label="Duration" title={`${s.first_seen} – ${s.last_seen}`}>
                  {durationText(sessionDuration(s))}
                </td>
                <td class="s-last" data-label="Last seen">
                  <TimeText iso={s.last_seen} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
