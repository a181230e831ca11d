/**
 * The strip over the explorer's table: requests and errors per bucket for the explorer's window and
 * filters (one summary call, made again only when those change, not for a page, a sort or an open log).
 * Drag across it to set the explorer's window to that stretch; click a bar to open its bucket.
 */
import { useEffect, useRef } from 'preact/hooks';
import { bucketZone, summarize } from '../api-summary';
import { bucketWindow, column, dashboardQuery, spanWindow, summaryBody, type Summary } from '../lib/summary';
import type { TimeWindow, ViewState } from '../lib/view-state';
import { go } from '../router';
import { useLoad } from '../use-load';
import { LazyChart, preloadCharts } from './chart-loader';
import { timeZone } from './time-text';

const METRICS = [{ agg: 'count' as const }, { agg: 'error_rate' as const }];

export function ChartStrip({
  apiKey,
  state,
  onWindow,
}: {
  apiKey: string;
  state: ViewState;
  /** Sets the explorer's window (a drag, a bar clicked, zoom out). */
  onWindow: (window: TimeWindow) => void;
}) {
  useEffect(preloadCharts, []);
  const tz = bucketZone(timeZone.value);
  const ready = state.window.kind === 'absolute' || state.window.at !== null;
  const key = JSON.stringify([state.window, state.conditions, state.quick ?? [], tz]);
  const [loaded] = useLoad<Summary | null>(
    () => (ready ? summarize(apiKey, summaryBody(state, Date.now(), tz, METRICS)) : Promise.resolve(null)),
    [key, apiKey],
  );
  // The last answer stays drawn while the next one loads: the strip does not blink at each change.
  const last = useRef<Summary | null>(null);
  if (loaded.state === 'done' && loaded.value) last.current = loaded.value;
  const summary = last.current;
  const points = summary?.totals.points ?? [];
  const requests = column(points, 0);
  const errors = points.map((p) => Math.round((p[0] ?? 0) * (p[1] ?? 0)));
  const totalRequests = summary?.totals.values[0] ?? 0;
  const totalErrors = Math.round(totalRequests * (summary?.totals.values[1] ?? 0));

  return (
    <figure class="chart-strip" aria-label="Requests and errors over time">
      <div class="chart-head">
        <span>
          <span class="swatch c1" aria-hidden="true" />
          Requests {summary ? totalRequests.toLocaleString('en-US') : '…'}
        </span>
        <span>
          <span class="swatch c2" aria-hidden="true" />
          Errors {summary ? totalErrors.toLocaleString('en-US') : '…'}
        </span>
        {summary && <span>per {summary.bucket}; drag across to zoom in</span>}
        <span class="spacer" />
        {state.window.kind === 'absolute' && (
          <button type="button" onClick={() => onWindow(zoomedOut(state.window as AbsoluteWindow))}>
            Zoom out
          </button>
        )}
        <a
          href={dashboardQuery(state)}
          onClick={(e) => {
            e.preventDefault();
            go(dashboardQuery(state));
          }}
        >
          See on the dashboard
        </a>
      </div>
      {loaded.state === 'error' && <p class="error">The chart could not be loaded: {loaded.message}</p>}
      {summary ? (
        <LazyChart
          x={summary.buckets.map((b) => Date.parse(b) / 1000)}
          series={[
            { label: 'Requests', values: requests, color: '--chart-1' },
            { label: 'Errors', values: errors, color: '--chart-2' },
          ]}
          bars
          height={90}
          utc={timeZone.value === 'utc'}
          format={(n) => (n >= 1000 ? `${Math.round(n / 100) / 10}k` : String(n))}
          onZoom={(from, to) => onWindow(spanWindow(from, to))}
          onPick={(i) => onWindow(bucketWindow(summary, i))}
          testId="chart-strip"
        />
      ) : (
        <div class="chart-canvas chart-waiting short" />
      )}
    </figure>
  );
}

type AbsoluteWindow = Extract<TimeWindow, { kind: 'absolute' }>;

/** Twice the span, around the same middle, ending no later than now. */
function zoomedOut(window: AbsoluteWindow): TimeWindow {
  const from = Date.parse(window.from);
  const to = Date.parse(window.to);
  const span = Math.max(60_000, to - from);
  const end = Math.min(Date.now(), to + span / 2);
  return spanWindow(end - span * 2, end);
}
