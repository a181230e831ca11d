/**
 * A session opened (`?v=sessions&session=<thread_identifier>`): its totals, then its calls oldest first
 * as a timeline — each call's time (and how far into the session), model, status, latency, tokens and
 * cost, its place on the session's time axis (as a trace's spans are drawn, trace-view.tsx), its input
 * (the last user message: a prompt, or a tool's result in Anthropic's shape) when it changed, and the
 * answer with its tool calls. Opened, a call shows what it sent that the call before had not (the tool
 * results, a new prompt) above its answer, and the whole log as the log panel does; its messages are read
 * then, one call, as a coding agent's prompt holds the whole conversation every time.
 * The calls are those the list counted in the session's row: its window and filters.
 */
import { useEffect, useState } from 'preact/hooks';
import { getLog, type LogItem } from '../api';
import { CALLS_PAGE_SIZE, sessionCalls, sessionTotals, type SessionCall } from '../api-sessions';
import { costText, secondsText } from '../lib/format';
import { shownMessage, turnOf } from '../lib/messages';
import {
  developers,
  durationText,
  sessionDuration,
  sessionsQuery,
  sessionState,
  type OwnerOf,
  type Session,
  type SessionsView,
} from '../lib/sessions';
import { explorerQuery } from '../lib/summary';
import { go } from '../router';
import { type Loaded, useLoad } from '../use-load';
import { LogDetail, MessageList } from './log-panel';
import { Tile } from './tiles';
import { TimeText } from './time-text';

type OpenView = SessionsView & { session: string };

/** A link within the UI: a new screen without reloading the page. */
function ScreenLink({ query, children, class: className }: { query: string; children: string; class?: string }) {
  return (
    <a
      href={query}
      class={className}
      onClick={(e) => {
        e.preventDefault();
        go(query);
      }}
    >
      {children}
    </a>
  );
}

export function SessionTimeline({ apiKey, view, ownerOf }: { apiKey: string; view: OpenView; ownerOf: OwnerOf }) {
  const { state, sort, session } = view;
  const key = JSON.stringify([state.window, state.conditions, state.quick ?? [], session]);
  const [totals] = useLoad(() => sessionTotals(apiKey, view, Date.now()), [key, apiKey]);
  const filtered = state.conditions.length > 0 || state.quick !== undefined;
  const back = sessionsQuery(state, sort);
  const explorer = explorerQuery(sessionState(state, session), []);
  return (
    <section class="session" aria-label="Session">
      <div class="toolbar">
        <ScreenLink query={back}>← Sessions</ScreenLink>
        <div class="toolbar-actions">
          <ScreenLink query={explorer} class="button">
            Open its calls in the explorer
          </ScreenLink>
        </div>
      </div>
      <h1>
        Session <code class="session-id">{session}</code>
      </h1>
      {filtered && (
        <p class="filters-note">
          <span>Only its calls that the sessions list&apos;s filters match.</span>
          {/* Every filter dropped: the filter bar's and the URL's quick filters alike. */}
          <button
            type="button"
            onClick={() => go(sessionsQuery({ ...state, conditions: [], quick: undefined }, sort, session))}
          >
            Show every call of the session
          </button>
        </p>
      )}
      {totals.state === 'error' && (
        <p role="alert" class="error">
          The session could not be read: {totals.message}
        </p>
      )}
      {totals.state === 'loading' && <p class="summary">Loading…</p>}
      {totals.state === 'done' && totals.value === null && (
        <p class="summary">
          No call of this session in this time window{filtered ? ' matches these filters' : ''}. A wider window may hold
          it.
        </p>
      )}
      {totals.state === 'done' && totals.value !== null && (
        <>
          <SessionTotals session={totals.value} ownerOf={ownerOf} />
          <Calls apiKey={apiKey} view={view} session={totals.value} listKey={key} />
        </>
      )}
    </section>
  );
}

function SessionTotals({ session: s, ownerOf }: { session: Session; ownerOf: OwnerOf }) {
  const count = (n: number) => n.toLocaleString('en-US');
  const who = developers(s.keys, ownerOf);
  return (
    <ul class="tiles" aria-label="Totals">
      <Tile name="Calls" value={count(s.calls)} more={s.errors > 0 ? `${count(s.errors)} failed` : 'none failed'} />
      <Tile name="Cost" value={costText(s.cost)} />
      <Tile
        name="Tokens"
        value={count(s.prompt_tokens + s.completion_tokens)}
        more={`${count(s.prompt_tokens)} in, ${count(s.completion_tokens)} out`}
      />
      <Tile name="Duration" value={durationText(sessionDuration(s))} />
      <Tile
        name="Developer"
        value={who.join(', ') || '—'}
        more={s.keys.length > 0 ? `key ${s.keys.join(', ')}` : undefined}
      />
      <Tile name="Models" value={s.models.join(', ') || '—'} />
    </ul>
  );
}

/** When a call began: its start_time, else its end less its latency. */
const startOf = (c: SessionCall) =>
  c.start_time ? Date.parse(c.start_time) : Date.parse(c.timestamp) - Math.max(0, c.latency) * 1000;

/** The timeline: the session's calls, oldest first, a page at a time ("Show the next calls"). */
function Calls({
  apiKey,
  view,
  session,
  listKey,
}: {
  apiKey: string;
  view: OpenView;
  session: Session;
  listKey: string;
}) {
  const [first] = useLoad(() => sessionCalls(apiKey, view, Date.now(), 1), [listKey, apiKey]);
  const [more, setMore] = useState<{
    key: string;
    calls: SessionCall[];
    next: boolean;
    loading: boolean;
    /** Why the next calls were not listed (shown by the button, which tries again). */
    error: string | null;
  }>({ key: '', calls: [], next: false, loading: false, error: null });
  useEffect(() => {
    if (first.state === 'done')
      setMore({ key: listKey, calls: [], next: first.value.next !== null, loading: false, error: null });
  }, [first]);
  if (first.state === 'loading') return <p class="summary">Loading the calls…</p>;
  if (first.state === 'error') {
    return (
      <p role="alert" class="error">
        The calls could not be listed: {first.message}
      </p>
    );
  }
  const calls = more.key === listKey ? [...first.value.results, ...more.calls] : first.value.results;
  const hasNext = more.key === listKey ? more.next : first.value.next !== null;
  const loadNext = () => {
    setMore((m) => ({ ...m, loading: true, error: null }));
    const page = Math.floor(calls.length / CALLS_PAGE_SIZE) + 1;
    sessionCalls(apiKey, view, Date.now(), page).then(
      (answer) =>
        setMore((m) =>
          m.key !== listKey
            ? m
            : {
                key: m.key,
                calls: [...m.calls, ...answer.results],
                next: answer.next !== null,
                loading: false,
                error: null,
              },
        ),
      (err: unknown) =>
        setMore((m) => ({ ...m, loading: false, error: err instanceof Error ? err.message : String(err) })),
    );
  };
  // The session's time axis: from its first call's start to its last call's end.
  const from = calls.length > 0 ? Math.min(...calls.map(startOf)) : Date.parse(session.first_seen);
  const to = Math.max(Date.parse(session.last_seen), from + 1);
  return (
    <>
      <h2 class="timeline-head">
        Calls <span class="summary">oldest first</span>
      </h2>
      <ol class="timeline" aria-label="Calls">
        {calls.map((c, i) => (
          <CallItem
            key={c.unique_id}
            apiKey={apiKey}
            call={c}
            n={i + 1}
            previous={calls[i - 1]}
            axis={{ from, to }}
            onExplore={(field, value, exclude) =>
              go(explorerQuery(view.state, [{ field, operator: exclude ? 'not' : '', values: [value] }]))
            }
          />
        ))}
      </ol>
      {hasNext && (
        <p class="timeline-more">
          <span class="summary">
            {calls.length} of {session.calls} calls shown.
          </span>{' '}
          <button type="button" disabled={more.loading} onClick={loadNext}>
            Show the next calls
          </button>
        </p>
      )}
      {hasNext && more.key === listKey && more.error !== null && (
        <p role="alert" class="error">
          The next calls could not be listed: {more.error}
        </p>
      )}
    </>
  );
}

function CallItem({
  apiKey,
  call: c,
  n,
  previous,
  axis,
  onExplore,
}: {
  apiKey: string;
  call: SessionCall;
  n: number;
  previous: SessionCall | undefined;
  axis: { from: number; to: number };
  onExplore(field: string, value: string | number, exclude: boolean): void;
}) {
  const [open, setOpen] = useState(false);
  // Opened, the call's log is read whole (once: what it sent above its answer, the whole log below).
  const [log] = useLoad(
    () => (open ? getLog(apiKey, c.unique_id) : Promise.resolve(null)),
    [open, apiKey, c.unique_id],
  );
  const failed = c.status_code >= 400;
  const start = startOf(c);
  const span = axis.to - axis.from;
  const left = Math.min(1, Math.max(0, (start - axis.from) / span));
  const width = Math.min(1 - left, Math.max(0, (Date.parse(c.timestamp) - start) / span));
  // The prompt is the user's last message: shown when it changed, not again on every call of the same turn.
  const prompt = c.input_preview && c.input_preview !== previous?.input_preview ? c.input_preview : null;
  const answer = shownMessage(c.completion_message);
  const answered = answer && (answer.text || answer.toolCalls.length > 0);
  return (
    <li class={`session-call${failed ? ' failed' : ''}`} aria-label={`Call ${n}`}>
      <div class="call-head">
        <span class="call-n">#{n}</span>
        <TimeText iso={c.timestamp} />
        <span class="call-offset" title="Into the session">
          {n === 1 ? 'start' : `+${durationText(start - axis.from)}`}
        </span>
        <strong class="call-model">{c.model || c.log_type}</strong>
        <span class={`status ${failed ? 'bad' : 'good'}`} title={c.status}>
          {c.status_code}
        </span>
        <span class="call-latency" title="Latency">
          {secondsText(c.latency)}
        </span>
        <span class="call-tokens" title="Tokens in, out">
          {c.prompt_tokens.toLocaleString('en-US')} in, {c.completion_tokens.toLocaleString('en-US')} out
        </span>
        <span class="call-cost" title="Cost">
          {costText(c.cost)}
        </span>
      </div>
      <span class="trace-axis" aria-hidden="true">
        <span
          class="trace-bar"
          style={{ left: `${(left * 100).toFixed(3)}%`, width: `max(2px, ${(width * 100).toFixed(3)}%)` }}
        />
      </span>
      {prompt && (
        <div class="call-prompt">
          <span class="role" title="The last user message it sent: a prompt, or a tool's result sent back">
            input
          </span>{' '}
          {prompt}
        </div>
      )}
      {open && <Sent log={log} n={n} />}
      {c.error_message && <p class="error">{c.error_message}</p>}
      {answered ? (
        <MessageList messages={[answer]} label={`Answer of call ${n}`} />
      ) : (
        c.output_preview && !c.error_message && <p class="call-output">{c.output_preview}</p>
      )}
      <button type="button" class="link" aria-expanded={open} onClick={() => setOpen(!open)}>
        {open ? 'Hide what it sent and the whole log' : 'Show what it sent (tool results, prompt) and the whole log'}
      </button>
      {open && <WholeLog log={log} onExplore={onExplore} />}
    </li>
  );
}

/** What a call added to the conversation: the tool results or the prompt it sent (not its answer). */
function Sent({ log, n }: { log: Loaded<LogItem | null>; n: number }) {
  if (log.state === 'loading' || (log.state === 'done' && log.value === null)) return <p class="summary">Loading…</p>;
  if (log.state === 'error') {
    return (
      <p role="alert" class="error">
        {log.message}
      </p>
    );
  }
  const sent = turnOf(log.value?.prompt_messages, null) ?? [];
  return sent.length > 0 ? (
    <MessageList messages={sent} label={`Sent by call ${n}`} />
  ) : (
    <p class="summary">No new message: this call sent no chat messages.</p>
  );
}

/** The whole log, folded, as the log panel shows it; its values filter the explorer. */
function WholeLog({
  log,
  onExplore,
}: {
  log: Loaded<LogItem | null>;
  onExplore(field: string, value: string | number, exclude: boolean): void;
}) {
  if (log.state !== 'done' || log.value === null) return null;
  return (
    <details class="block call-log">
      <summary>The whole log</summary>
      <LogDetail log={log.value} onFilter={onExplore} />
    </details>
  );
}
