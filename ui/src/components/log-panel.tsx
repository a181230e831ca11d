/**
 * The open log, whole (GET /api/request-logs/{id}/): its figures, messages or texts, metadata and
 * scores. Esc closes it; j / k open the next / previous log of the page.
 */
import { JsonView } from './json-view';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, getLog, type LogItem } from '../api';
import type { JSX } from 'preact';
import { costText, secondsText } from '../lib/format';
import { SidePanel } from './side-panel';
import { TimeText } from './time-text';
import { conversationOf, embeddingTexts, type ShownMessage } from '../lib/messages';
import { LargeGate, LargeText } from './large-text';
import { formatScreen } from '../lib/screen';
import { go } from '../router';

interface Props {
  apiKey: string;
  id: string;
  onClose(): void;
  onStep(delta: 1 | -1): void;
  /** Filters the list to (or, with `exclude`, away from) a value of the open log. */
  onFilter(field: string, value: string | number, exclude: boolean): void;
}

type OnFilter = Props['onFilter'];

/** A value with buttons that filter the list to it or exclude it. */
function Filterable({
  field,
  value,
  shown,
  onFilter,
}: {
  field: string;
  value: string | number;
  shown: string;
  onFilter: OnFilter;
}) {
  return (
    <span class="filterable">
      {shown}
      <button
        type="button"
        class="mini"
        aria-label={`Only ${field} ${value}`}
        title="Only this value"
        onClick={() => onFilter(field, value, false)}
      >
        =
      </button>
      <button
        type="button"
        class="mini"
        aria-label={`Exclude ${field} ${value}`}
        title="Exclude this value"
        onClick={() => onFilter(field, value, true)}
      >
        ≠
      </button>
    </span>
  );
}

export function LogPanel({ apiKey, id, onClose, onStep, onFilter }: Props) {
  const [log, setLog] = useState<LogItem | null>(null);
  const [error, setError] = useState<string | null>(null);
  const panel = useRef<HTMLDivElement>(null);

  useEffect(() => {
    let stale = false;
    setLog(null);
    setError(null);
    getLog(apiKey, id).then(
      (found) => !stale && setLog(found),
      (err: unknown) => !stale && setError(err instanceof ApiError ? err.message : String(err)),
    );
    return () => {
      stale = true;
    };
  }, [apiKey, id]);

  // Added once, reading the latest callbacks through a ref (see annotate.tsx for why).
  const latest = useRef({ onClose, onStep });
  latest.current = { onClose, onStep };
  useEffect(() => {
    panel.current?.focus();
    const onKey = (e: KeyboardEvent) => {
      const target = e.target as HTMLElement | null;
      if (target && ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName)) return;
      // Esc is the side panel's own (it closes the top panel and gives the focus back).
      if (e.key === 'j') latest.current.onStep(1);
      else if (e.key === 'k') latest.current.onStep(-1);
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, []);

  return (
    <SidePanel label="Log detail" title={`Log ${id}`} onClose={onClose} focusRef={panel}>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {!log && !error && <p>Loading…</p>}
      {log && <LogDetail log={log} onFilter={onFilter} />}
    </SidePanel>
  );
}

/** The log's place in its trace, and the way to the trace's tree. */
function TraceLink({ log }: { log: LogItem }) {
  const query = formatScreen({ kind: 'trace', id: String(log.trace_unique_id) });
  const span = typeof log.span_name === 'string' && log.span_name ? `${log.span_name} · ` : '';
  return (
    <a
      href={query}
      onClick={(e) => {
        e.preventDefault();
        go(query);
      }}
    >
      {span}view the trace
    </a>
  );
}

/** A log's detail: figures, messages or texts, input and output, metadata (the panel's, a trace's span's). */
export function LogDetail({ log, onFilter }: { log: LogItem; onFilter: OnFilter }) {
  const by = (field: string, value: string | number, shown = String(value)) => (
    <Filterable field={field} value={value} shown={shown} onFilter={onFilter} />
  );
  const facts: [string, string | JSX.Element][] = [
    ['Time', <TimeText iso={log.timestamp} />],
    ['Status', by('status_code', log.status_code, `${log.status_code} ${log.status}`)],
    ['Type', log.stream === true ? <>{by('log_type', log.log_type)} · streamed</> : by('log_type', log.log_type)],
    ['Model', by('model', log.model)],
    ['Provider', log.provider_id ? by('provider_id', String(log.provider_id)) : '—'],
    ['Customer', log.customer_identifier ? by('customer_identifier', log.customer_identifier) : '—'],
    ['Tokens', `${log.prompt_tokens} in, ${log.completion_tokens} out`],
    ['Cost', costText(log.cost)],
    ['Latency', secondsText(log.latency)],
  ];
  if (log.time_to_first_token !== null) facts.push(['Time to first token', secondsText(log.time_to_first_token)]);
  // A streamed answer's pace: completion tokens over the time from the first token to the last.
  if (log.stream === true && typeof log.tokens_per_second === 'number' && log.tokens_per_second > 0)
    facts.push(['Tokens per second', log.tokens_per_second.toFixed(1)]);
  // The provider sent no usage: the counts are gatelog's own, from the text.
  if (log.metadata?.usage_source === 'estimated') facts.push(['Token counts', 'estimated by gatelog']);
  if (log.embedding_dimensions != null)
    facts.push(['Embeddings', `${String(log.embedding_count)} × ${String(log.embedding_dimensions)} dimensions`]);
  if (log.audio_duration != null) facts.push(['Audio', `${String(log.audio_duration)} s`]);
  // The code beside the message, filterable: every call that failed the same way.
  if (log.error_code || log.error_message)
    facts.push([
      'Error',
      <>
        {log.error_code && by('error_code', log.error_code)}
        {log.error_code && log.error_message ? ' · ' : ''}
        {log.error_message ?? ''}
      </>,
    ]);
  if (typeof log.trace_unique_id === 'string' && log.trace_unique_id !== '')
    facts.push(['Trace', <TraceLink log={log} />]);
  if (log.fallback_used === true) facts.push(['Fallback', by('fallback_used', 'true', 'a fallback model answered')]);
  if (log.cache_hit === true) facts.push(['Cache', by('cache_hit', 'true', 'answered from the cache')]);
  const attempts = Array.isArray(log.attempts) ? (log.attempts as Attempt[]) : [];
  const scores = Object.entries(log.scores ?? {});
  const metadata = Object.entries(log.metadata ?? {});
  const conversation = conversationOf(log.prompt_messages, log.completion_message);
  const texts = log.log_type === 'embedding' ? embeddingTexts(log.input) : null;
  return (
    <div class="detail">
      <dl class="facts">
        {facts.map(([name, value]) => (
          <div key={name}>
            <dt>{name}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      {typeof log.transcript === 'string' && <Block title="Transcript" text={log.transcript} />}
      {conversation && <Conversation messages={conversation} />}
      {texts && (
        <section class="block" aria-label="Input texts">
          <h3>Input texts ({texts.length})</h3>
          <ol class="texts">
            {texts.map((text, i) => (
              <li key={i}>{text}</li>
            ))}
          </ol>
        </section>
      )}
      {attempts.length > 0 && <Attempts attempts={attempts} />}
      <Block title="Input" text={log.input} collapsed={conversation !== null || texts !== null} />
      <Block title="Output" text={log.output} collapsed={conversation !== null} />
      {metadata.length > 0 && (
        <>
          <h3>Metadata</h3>
          <table class="kv">
            <tbody>
              {metadata.map(([key, value]) => (
                <tr key={key}>
                  <th scope="row">{key}</th>
                  <td>{by(`metadata__${key}`, typeof value === 'string' ? value : JSON.stringify(value))}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      {metadata.length > 0 && <Block title="Metadata" text={JSON.stringify(log.metadata)} collapsed />}
      {scores.length > 0 && (
        <>
          <h3>Scores</h3>
          <table class="kv">
            <tbody>
              {scores.map(([evaluator, score]) => (
                <tr key={evaluator}>
                  <th scope="row">{score.evaluator_name}</th>
                  <td>{score.score_value}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </div>
  );
}

interface Attempt {
  provider: string;
  model: string;
  status_code: number;
  error: string;
  latency: number;
}

/** The tries before the one that answered (retries, fallbacks), in order. */
function Attempts({ attempts }: { attempts: Attempt[] }) {
  return (
    <section class="block" aria-label="Attempts">
      <h3>Attempts before the answer ({attempts.length})</h3>
      <table class="kv">
        <thead>
          <tr>
            <th scope="col">Provider · model</th>
            <th scope="col">Status</th>
            <th scope="col">Error</th>
            <th scope="col">Time</th>
          </tr>
        </thead>
        <tbody>
          {attempts.map((a, i) => (
            <tr key={i}>
              <td>
                {a.provider} · {a.model}
              </td>
              <td>{a.status_code}</td>
              <td>{a.error}</td>
              <td>{secondsText(a.latency)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** A chat's messages: role, text and tool calls, in order. */
function Conversation({ messages }: { messages: ShownMessage[] }) {
  return (
    <section class="block" aria-label="Messages">
      <h3>Messages</h3>
      <MessageList messages={messages} />
    </section>
  );
}

/** Messages as the log panel shows them (a session's timeline shows a call's turn the same way). */
export function MessageList({ messages, label }: { messages: ShownMessage[]; label?: string }) {
  return (
    <ol class="messages" aria-label={label}>
      {messages.map((m, i) => (
        <li key={i} class={`message role-${m.role}`}>
          <span class="role">{m.role}</span>
          {m.text && <LargeText text={m.text} render={(shown) => <p>{shown}</p>} />}
          {m.toolCalls.map((call, j) => (
            <LargeText
              key={j}
              text={`${call.name}(${call.arguments})`}
              render={(shown) => <pre class="tool-call">{shown}</pre>}
            />
          ))}
        </li>
      ))}
    </ol>
  );
}

/** A JSON-text field shown indented, with a copy button; folded when another view of it comes first. */
function Block({ title, text, collapsed = false }: { title: string; text: string | null; collapsed?: boolean }) {
  if (text === null || text === '') return null;
  // Indented when copied: read only then, so that a large field is not parsed to be drawn folded.
  const indented = () => {
    try {
      return JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      return text;
    }
  };
  const body = (
    <>
      <div class="block-head">
        <h3>{title}</h3>
        <button type="button" onClick={() => void navigator.clipboard?.writeText(indented())}>
          Copy
        </button>
      </div>
      <LargeGate chars={text.length}>{() => <JsonView text={text} title={title} />}</LargeGate>
    </>
  );
  return collapsed ? (
    <details class="block" aria-label={title}>
      <summary>{title} as JSON</summary>
      {body}
    </details>
  ) : (
    <section class="block" aria-label={title}>
      {body}
    </section>
  );
}
