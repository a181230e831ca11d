/**
 * One trace as a tree of its spans (`?v=trace&id=<trace id>`): each span under its parent, its duration
 * as a bar on the trace's time axis, model calls marked. A click shows the span beside the tree — its
 * input, output, figures and metadata, as the log panel shows a log — without leaving the trace, as
 * Langfuse does; from there, "Open in the explorer". Reached from any log that belongs to a trace (the
 * log panel's "Trace" line).
 */
import { useState } from 'preact/hooks';
import { call, getLog, type LogItem, type LogPage } from '../api';
import { costText, secondsText } from '../lib/format';
import { explorerQuery } from '../lib/summary';
import { CALL_TYPES, traceTree, type TraceLog } from '../lib/trace-tree';
import { go } from '../router';
import { useLoad } from '../use-load';
import { LogDetail } from './log-panel';

/** The most spans shown: a trace larger than this says so. */
const MAX_SPANS = 1000;

export function TraceView({ apiKey, traceId }: { apiKey: string; traceId: string }) {
  const [chosen, setChosen] = useState<string | null>(null);
  const [loaded] = useLoad(async () => {
    const q = new URLSearchParams({
      trace_unique_id: traceId,
      start_time: '2000-01-01T00:00:00Z',
      page_size: String(MAX_SPANS),
      sort_by: 'timestamp',
    });
    return call<LogPage>(apiKey, 'GET', `request-logs/list/?${q.toString()}`);
  }, [apiKey, traceId]);

  if (loaded.state === 'loading') return <p>Loading the trace…</p>;
  if (loaded.state === 'error') {
    return (
      <p role="alert" class="error">
        {loaded.message}
      </p>
    );
  }
  const page = loaded.value;
  const logs = page.results as (LogItem & TraceLog)[];
  const tree = traceTree(logs);
  const cost = logs.reduce((sum, l) => sum + (l.cost ?? 0), 0);
  const tokens = logs.reduce((sum, l) => sum + l.prompt_tokens + l.completion_tokens, 0);
  const calls = logs.filter((l) => CALL_TYPES.has(l.log_type)).length;
  return (
    <section class="trace" aria-label="Trace">
      <h1>Trace</h1>
      <p class="trace-facts">
        <code>{traceId}</code> · {logs.length} spans, {calls} model calls · {secondsText(tree.durationMs / 1000)} ·{' '}
        {tokens} tokens · {costText(cost)}
      </p>
      {page.count !== null && page.count > logs.length && (
        <p class="warn">
          The trace has {page.count} spans; the first {logs.length} are shown.
        </p>
      )}
      {logs.length === 0 && <p>No logs belong to this trace (or they are older than the retention).</p>}
      <div class={`trace-body${chosen ? ' with-span' : ''}`}>
        <ol class="trace-rows" role="tree" aria-label="Spans">
          {tree.rows.map((row) => (
            <li
              key={row.log.unique_id}
              role="treeitem"
              aria-level={row.depth + 1}
              aria-selected={row.log.unique_id === chosen}
            >
              <button
                type="button"
                class={`trace-row${row.log.status_code >= 400 ? ' failed' : ''}${CALL_TYPES.has(row.log.log_type) ? ' call' : ''}`}
                onClick={() => setChosen(row.log.unique_id)}
                title={`Show ${row.name} beside the tree`}
              >
                <span class="trace-name" style={{ paddingLeft: `${row.depth * 16}px` }}>
                  <span class="trace-type">{row.log.log_type}</span> {row.name}
                  {CALL_TYPES.has(row.log.log_type) && row.log.model ? (
                    <span class="trace-model"> · {row.log.model}</span>
                  ) : null}
                </span>
                <span class="trace-axis" aria-hidden="true">
                  <span
                    class="trace-bar"
                    style={{
                      left: `${(row.left * 100).toFixed(3)}%`,
                      width: `max(2px, ${(row.width * 100).toFixed(3)}%)`,
                    }}
                  />
                </span>
                <span class="trace-time">{secondsText(row.durationMs / 1000)}</span>
              </button>
            </li>
          ))}
        </ol>
        {chosen && <SpanDetail apiKey={apiKey} id={chosen} onClose={() => setChosen(null)} />}
      </div>
    </section>
  );
}

/** The chosen span, read whole, beside the tree. */
function SpanDetail({ apiKey, id, onClose }: { apiKey: string; id: string; onClose(): void }) {
  const [span] = useLoad(() => getLog(apiKey, id), [apiKey, id]);
  const explore = (field: string, value: string | number, exclude: boolean) =>
    go(
      explorerQuery({ window: { kind: 'relative', span: '30d', at: null }, conditions: [] }, [
        { field, operator: exclude ? 'not' : '', values: [value] },
      ]),
    );
  return (
    <section class="trace-span" aria-label="Span">
      <div class="block-head">
        <h2>{span.state === 'done' ? (span.value.span_name ?? span.value.log_type) : 'Span'}</h2>
        <span>
          <button type="button" onClick={() => go(`?log=${encodeURIComponent(id)}&range=30d`)}>
            Open in the explorer
          </button>{' '}
          <button type="button" aria-label="Close the span" onClick={onClose}>
            ×
          </button>
        </span>
      </div>
      {span.state === 'loading' && <p>Loading…</p>}
      {span.state === 'error' && (
        <p role="alert" class="error">
          {span.message}
        </p>
      )}
      {span.state === 'done' && <LogDetail log={span.value} onFilter={explore} />}
    </section>
  );
}
