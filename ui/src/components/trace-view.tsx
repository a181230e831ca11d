/**
 * One trace as a tree of its spans (`?v=trace&id=<trace id>`): each span under its parent, its duration
 * as a bar on the trace's time axis, model calls marked; a click opens the span's log in the explorer.
 * Reached from any log that belongs to a trace (the log panel's "Trace" line).
 */
import { call, type LogItem, type LogPage } from '../api';
import { costText, secondsText } from '../lib/format';
import { CALL_TYPES, traceTree, type TraceLog } from '../lib/trace-tree';
import { go } from '../router';
import { useLoad } from '../use-load';

/** The most spans shown: a trace larger than this says so. */
const MAX_SPANS = 1000;

export function TraceView({ apiKey, traceId }: { apiKey: string; traceId: string }) {
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
      <ol class="trace-rows" role="tree">
        {tree.rows.map((row) => (
          <li key={row.log.unique_id} role="treeitem" aria-level={row.depth + 1}>
            <button
              type="button"
              class={`trace-row${row.log.status_code >= 400 ? ' failed' : ''}${CALL_TYPES.has(row.log.log_type) ? ' call' : ''}`}
              onClick={() => go(`?log=${encodeURIComponent(row.log.unique_id)}&range=30d`)}
              title={`Open the log of ${row.name}`}
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
    </section>
  );
}
