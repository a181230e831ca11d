/**
 * The dashboard: requests, errors, cost, tokens, latency and time to first token over the chosen window,
 * requests and cost per model, and the top models, customers and keys (each table sortable by any column,
 * the order kept in localStorage), from the analytics route (four summary calls). Its window and filters
 * are the explorer's, in the URL (`?v=dashboard&range=24h…`, lib/view-state.ts); it counts model calls
 * only, unless the filters pick log types (lib/summary.ts modelCallsOf). A click on a chart opens the
 * explorer at that bucket (filtered to the series clicked, where it is one: errors, a model); a click on
 * a top-N row or a legend entry opens it filtered to that group over the window; a drag across a chart
 * zooms the dashboard into that stretch.
 */
import { computed, signal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { type ApiKey, keyOwners, ownerText } from '../api-keys';
import { bucketZone, summarize } from '../api-summary';
import type { ChartSeries } from '../lib/chart-props';
import { costText, secondsText } from '../lib/format';
import {
  approximation,
  bucketWindow,
  column,
  dashboardQuery,
  ERRORS,
  explorerQuery,
  groupCondition,
  modelCallsOf,
  picksLogTypes,
  spanWindow,
  sumColumn,
  summaryBody,
  total,
  type GroupValue,
  type Metric,
  type Summary,
} from '../lib/summary';
import { MODEL_CALL_TYPES } from '../lib/log-types';
import {
  DEFAULT_TOP_SORT,
  nextTopSort,
  parseTopSort,
  sortTopRows,
  topSortText,
  type TopColumn,
  type TopRow,
  type TopSort,
} from '../lib/top-sort';
import { parseViewState, type Condition, type TimeWindow, type ViewState } from '../lib/view-state';
import { go, search } from '../router';
import { type Loaded, useLoad } from '../use-load';
import { LazyChart, preloadCharts } from './chart-loader';
import { Tile } from './tiles';
import { timeZone } from './time-text';
import { WindowPicker } from './window-picker';

const view = computed(() => parseViewState(search.value));

/** The metrics over time, in this order (indices below). */
const TOTALS: Metric[] = [
  { agg: 'count' },
  { agg: 'error_rate' },
  { field: 'cost', agg: 'sum' },
  { field: 'prompt_tokens', agg: 'sum' },
  { field: 'completion_tokens', agg: 'sum' },
  { field: 'latency', agg: 'p50' },
  { field: 'latency', agg: 'p95' },
  { field: 'time_to_first_token', agg: 'p50' },
  { field: 'time_to_first_token', agg: 'p95' },
];
const [COUNT, ERROR_RATE, COST, PROMPT, COMPLETION, P50, P95, TTFT50, TTFT95] = TOTALS.keys();

/** Per group: counts and sums, which add up across buckets (a group's percentiles would not). */
const PER_GROUP: Metric[] = [
  { agg: 'count' },
  { agg: 'error_rate' },
  { field: 'cost', agg: 'sum' },
  { field: 'latency', agg: 'sum' },
  { field: 'latency', agg: 'count' },
];

const TOPS = [
  { field: 'model', title: 'Top models', noun: 'Model' },
  { field: 'customer_identifier', title: 'Top customers', noun: 'Customer' },
  { field: 'organization_key__name', title: 'Top keys', noun: 'Key' },
] as const;

/** Models drawn in "Requests by model" and "Cost by model"; the top-N table lists more. */
const MODELS_DRAWN = 5;

/** The top lists' summaries, in TOPS' order; each panel draws when its own answer arrives. */
type Tops = [Loaded<Summary>, Loaded<Summary>, Loaded<Summary>];

const countText = (n: number) => Math.round(n).toLocaleString('en-US');
const compact = (n: number) =>
  Math.abs(n) >= 1000
    ? new Intl.NumberFormat('en-US', { notation: 'compact' }).format(n)
    : String(Math.round(n * 100) / 100);
const percentText = (rate: number | null) =>
  rate === null ? '—' : `${(rate * 100).toFixed(rate > 0 && rate < 0.001 ? 2 : 1)}%`;
const secondsOrDash = (s: number | null | undefined) => (s === null || s === undefined ? '—' : secondsText(s));

/** Failed logs per bucket: each bucket's count times its error rate. */
const errorsOf = (points: (number | null)[][]) => points.map((p) => Math.round((p[0] ?? 0) * (p[1] ?? 0)));

/** A group's numbers over the whole window, added up from its buckets. */
function groupTotals(points: (number | null)[][]) {
  const requests = total(column(points, 0));
  const errors = total(errorsOf(points));
  const costs = column(points, 2);
  const latencyCount = total(column(points, 4));
  return {
    requests,
    errors,
    cost: costs.some((c) => c !== null) ? total(costs) : null,
    latency: latencyCount > 0 ? total(column(points, 3)) / latencyCount : null,
  };
}

const SORT_STORE = 'gatelog.dashboardSort';

/** Each top-N table's order by its group-by field, kept across refreshes, screens and reloads. */
const topSorts = signal<Record<string, TopSort>>(readSorts());

function readSorts(): Record<string, TopSort> {
  try {
    const kept = JSON.parse(localStorage.getItem(SORT_STORE) ?? '{}') as unknown;
    if (!kept || typeof kept !== 'object') return {};
    return Object.fromEntries(Object.entries(kept).map(([field, text]) => [field, parseTopSort(text)]));
  } catch {
    return {};
  }
}

function setTopSort(field: string, sort: TopSort): void {
  topSorts.value = { ...topSorts.value, [field]: sort };
  const kept = Object.fromEntries(Object.entries(topSorts.value).map(([f, s]) => [f, topSortText(s)]));
  localStorage.setItem(SORT_STORE, JSON.stringify(kept));
}

const groupName = (value: GroupValue) => (value === null || value === '' ? '(none)' : String(value));

function anchored(state: ViewState): boolean {
  return state.window.kind === 'absolute' || state.window.at !== null;
}

export function Dashboard({ apiKey }: { apiKey: string }) {
  const state = view.value;
  const utc = timeZone.value === 'utc';
  const tz = bucketZone(timeZone.value);
  const windowKey = JSON.stringify(state.window);
  const key = JSON.stringify([state.window, state.conditions, state.quick ?? [], tz]);

  useEffect(preloadCharts, []);

  // A relative window is anchored once, as in the explorer: the numbers hold still until Refresh.
  useEffect(() => {
    if (state.window.kind === 'relative' && !state.window.at) {
      go(dashboardQuery({ ...state, window: { ...state.window, at: new Date().toISOString() } }), true);
    }
  }, [windowKey]);

  // Four calls, each drawn when it answers: the totals' tiles and charts do not wait for the top lists
  // (customers can be thousands of groups to rank), nor the lists for one another.
  // What it counts: model calls, unless the filters pick log types themselves.
  const counted = modelCallsOf(state);
  const summary =
    (metrics: Metric[], groupBy?: string, totalsOnly = false) =>
    () =>
      anchored(state)
        ? summarize(
            apiKey,
            totalsOnly
              ? summaryBody(counted, Date.now(), 'UTC', metrics, groupBy, 10, '1d')
              : summaryBody(counted, Date.now(), tz, metrics, groupBy, groupBy ? 10 : undefined),
          )
        : new Promise<never>(() => {});
  // The totals' call of the window shown and its charts, which the top customers and keys wait for
  // (below): `settled` once the charts are drawn, or the totals failed.
  const totalsCall = useRef<{ key: string; drawn: () => void; settled: Promise<unknown> } | null>(null);
  const [loaded] = useLoad(() => {
    const call = summary(TOTALS)();
    let drawn!: () => void;
    const chartsDrawn = new Promise<void>((resolve) => (drawn = resolve));
    totalsCall.current = {
      key,
      drawn,
      settled: call.then(
        () => chartsDrawn,
        () => undefined,
      ),
    };
    return call;
  }, [key, apiKey]);
  // The top customers and keys are asked for once the totals' charts are drawn: ranking the customers is
  // the page's heaviest read, and where the browser and a server of two cores share a machine it took the
  // cores the drawing was waiting for (bench/README.md `ui`). They only add their points up over the
  // window, so they ask for UTC days: a customer's day is one row of the customer rollups, where an hour
  // holds a log or two (and the logs would be read instead). The top models also draw the models'
  // charts, in the range's own buckets, and are asked for at once.
  const afterTotals = (load: () => Promise<Summary>) => () => {
    const call = totalsCall.current;
    return (call?.key === key ? call.settled : Promise.resolve()).then(load);
  };
  const tops: Tops = [
    useLoad(summary(PER_GROUP, TOPS[0].field), [key, apiKey])[0],
    useLoad(afterTotals(summary(PER_GROUP, TOPS[1].field, true)), [key, apiKey])[0],
    useLoad(afterTotals(summary(PER_GROUP, TOPS[2].field, true)), [key, apiKey])[0],
  ];
  // Keys read as the developers who own them; without the owners (an error) the keys' names alone.
  const [owners] = useLoad(() => keyOwners(apiKey).catch(() => new Map()), [apiKey]);

  const setWindow = (window: TimeWindow) => go(dashboardQuery({ ...state, window }));
  const explore = (extra: Condition[], window?: TimeWindow) => go(explorerQuery(counted, extra, window));

  return (
    <section class="dashboard" aria-label="Dashboard">
      <div class="toolbar">
        <WindowPicker window={state.window} onChange={setWindow} />
        <div class="toolbar-actions">
          <button type="button" onClick={() => explore([])}>
            Open in the explorer
          </button>
        </div>
      </div>
      {(state.conditions.length > 0 || state.quick) && (
        <p class="filters-note">
          <span>
            Filtered:{' '}
            {[
              ...state.conditions.map((c) => `${c.field} ${c.operator || 'is'} ${c.values.join(', ')}`),
              ...(state.quick ?? []).map(([n, v]) => `${n}=${v}`),
            ].join('; ')}
          </span>
          <button type="button" onClick={() => go(dashboardQuery({ window: state.window, conditions: [] }))}>
            Clear filters
          </button>
        </p>
      )}
      {!picksLogTypes(state) && (
        <p class="counting-note">
          Counts model calls ({MODEL_CALL_TYPES.join(', ')}); the spans of a trace (workflow, task, tool, agent…) are
          left out. A log type filter counts those.
        </p>
      )}
      {loaded.state === 'error' && (
        <p role="alert" class="error">
          The dashboard could not be loaded: {loaded.message}
        </p>
      )}
      {loaded.state === 'loading' && <p aria-live="polite">Loading…</p>}
      {loaded.state === 'done' && (
        <Numbers
          totals={loaded.value}
          tops={tops}
          owners={owners.state === 'done' ? owners.value : undefined}
          utc={utc}
          onZoom={(from, to) => setWindow(spanWindow(from, to))}
          onExplore={explore}
          onDrawn={() => totalsCall.current?.drawn()}
        />
      )}
    </section>
  );
}

function Numbers({
  totals,
  tops,
  owners,
  utc,
  onZoom,
  onExplore,
  onDrawn,
}: {
  totals: Summary;
  tops: Tops;
  /** Each owned key's owner, by key name, once loaded. */
  owners: Map<string, ApiKey['owner']> | undefined;
  utc: boolean;
  onZoom: (from: number, to: number) => void;
  onExplore: (extra: Condition[], window?: TimeWindow) => void;
  /** The totals' charts drawn (the first of them: they are drawn together). */
  onDrawn: () => void;
}) {
  const v = totals.totals.values;
  const points = totals.totals.points;
  const requests = v[COUNT] ?? 0;
  const errors = Math.round(requests * (v[ERROR_RATE] ?? 0));
  const x = totals.buckets.map((b) => Date.parse(b) / 1000);
  const atBucket = (i: number, extra: Condition[] = []) => onExplore(extra, bucketWindow(totals, i));
  const chart = (
    caption: string,
    series: ChartSeries[],
    format: (n: number) => string,
    testId: string,
    pick: (bucket: number, series: number | null) => void = (i) => atBucket(i),
    drawn?: () => void,
  ) => (
    <figure aria-label={caption}>
      <figcaption>{caption}</figcaption>
      <ul class="legend" aria-label={`${caption}: series`}>
        {series.map((s, i) => (
          <li key={s.label}>
            <span class={`swatch c${(i % 6) + 1}`} aria-hidden="true" />
            {s.label}
          </li>
        ))}
      </ul>
      <LazyChart
        x={x}
        series={series}
        height={160}
        utc={utc}
        format={format}
        onZoom={onZoom}
        onPick={pick}
        testId={testId}
        onDrawn={drawn}
      />
    </figure>
  );

  return (
    <>
      {requests === 0 && <p>No logs in this time window: calls through the proxy and the logging API appear here.</p>}
      <ul class="tiles" aria-label="Totals">
        <Tile name="Requests" value={countText(requests)} />
        <Tile name="Errors" value={countText(errors)} more={`${percentText(v[ERROR_RATE])} of requests`} />
        <Tile name="Cost" value={requests === 0 ? '$0' : costText(v[COST])} />
        <Tile
          name="Tokens"
          value={countText((v[PROMPT] ?? 0) + (v[COMPLETION] ?? 0))}
          more={`${countText(v[PROMPT] ?? 0)} in, ${countText(v[COMPLETION] ?? 0)} out`}
        />
        <Tile
          name="Latency p50 / p95"
          value={`${secondsOrDash(v[P50])} / ${secondsOrDash(v[P95])}`}
          more={approximation(totals)}
        />
        <Tile
          name="Time to first token p50 / p95"
          value={`${secondsOrDash(v[TTFT50])} / ${secondsOrDash(v[TTFT95])}`}
          more={approximation(totals)}
        />
      </ul>
      <div class="charts">
        {chart(
          'Requests and errors',
          [
            { label: 'Requests', values: column(points, COUNT), color: '--chart-1' },
            { label: 'Errors', values: errorsOf(points), color: '--chart-2' },
          ],
          compact,
          'chart-requests',
          (i, s) => atBucket(i, s === 1 ? [ERRORS] : []),
          onDrawn,
        )}
        {chart(
          'Cost',
          [{ label: 'Cost', values: sumColumn(points, COST, COUNT), color: '--chart-1' }],
          costText,
          'chart-cost',
        )}
        {chart(
          'Tokens',
          [
            { label: 'Prompt', values: sumColumn(points, PROMPT, COUNT), color: '--chart-1' },
            { label: 'Completion', values: sumColumn(points, COMPLETION, COUNT), color: '--chart-2' },
          ],
          compact,
          'chart-tokens',
        )}
        {chart(
          'Latency',
          [
            { label: 'p50', values: column(points, P50), color: '--chart-1' },
            { label: 'p95', values: column(points, P95), color: '--chart-2' },
          ],
          secondsText,
          'chart-latency',
        )}
        {chart(
          'Time to first token',
          [
            { label: 'p50', values: column(points, TTFT50), color: '--chart-1' },
            { label: 'p95', values: column(points, TTFT95), color: '--chart-2' },
          ],
          secondsText,
          'chart-ttft',
        )}
        <ModelsChart
          caption="Requests by model"
          legend="Models: open in the explorer"
          metric={0}
          format={compact}
          testId="chart-models"
          loaded={tops[0]}
          utc={utc}
          onZoom={onZoom}
          onExplore={onExplore}
        />
        <ModelsChart
          caption="Cost by model"
          legend="Cost by model: open in the explorer"
          metric={2}
          format={costText}
          testId="chart-model-costs"
          loaded={tops[0]}
          utc={utc}
          onZoom={onZoom}
          onExplore={onExplore}
        />
      </div>
      <div class="tops">
        {TOPS.map((t, i) => (
          <TopList
            key={t.field}
            field={t.field}
            title={t.title}
            noun={t.noun}
            loaded={tops[i]}
            onExplore={onExplore}
            owners={t.field === 'organization_key__name' ? owners : undefined}
          />
        ))}
      </div>
    </>
  );
}

/** A panel's words while its summary is on its way, or when it could not be had. */
function Pending({ loaded }: { loaded: Loaded<unknown> }) {
  return loaded.state === 'error' ? (
    <p class="error">Could not be loaded: {loaded.message}</p>
  ) : (
    <p aria-live="polite">Loading…</p>
  );
}

/**
 * One metric per bucket of the top models (requests, cost), from the "Top models" summary (its buckets
 * are the totals'): the same models in the same colours in every such chart.
 */
function ModelsChart({
  caption,
  legend,
  metric,
  format,
  testId,
  loaded,
  utc,
  onZoom,
  onExplore,
}: {
  caption: string;
  legend: string;
  /** The metric's index in PER_GROUP: a count or a sum (0 in a bucket without logs). */
  metric: number;
  format: (n: number) => string;
  testId: string;
  loaded: Loaded<Summary>;
  utc: boolean;
  onZoom: (from: number, to: number) => void;
  onExplore: (extra: Condition[], window?: TimeWindow) => void;
}) {
  const models = loaded.state === 'done' ? loaded.value : null;
  const drawn = models ? models.series.filter((s) => !s.other).slice(0, MODELS_DRAWN) : [];
  return (
    <figure aria-label={caption}>
      <figcaption>{caption}</figcaption>
      <ul class="legend" aria-label={legend}>
        {drawn.map((s, i) => (
          <li key={groupName(s.group.model)}>
            <button
              type="button"
              title={`Open the explorer filtered to ${groupName(s.group.model)}`}
              onClick={() => onExplore([groupCondition('model', s.group.model)])}
            >
              <span class={`swatch c${(i % 6) + 1}`} aria-hidden="true" />
              {groupName(s.group.model)}
            </button>
          </li>
        ))}
      </ul>
      {models ? (
        <LazyChart
          x={models.buckets.map((b) => Date.parse(b) / 1000)}
          series={drawn.map((s, i) => ({
            label: groupName(s.group.model),
            values: sumColumn(s.points, metric),
            color: `--chart-${(i % 6) + 1}`,
          }))}
          height={160}
          utc={utc}
          format={format}
          onZoom={onZoom}
          onPick={(i, s) =>
            onExplore(s === null ? [] : [groupCondition('model', drawn[s].group.model)], bucketWindow(models, i))
          }
          testId={testId}
        />
      ) : (
        // The chart's box holds its place: nothing below moves when the models arrive.
        <div class="chart-canvas chart-waiting" aria-busy={loaded.state === 'loading'}>
          {loaded.state === 'error' && <Pending loaded={loaded} />}
        </div>
      )}
    </figure>
  );
}

/** A top-N table's columns after the group's name: header, sort key, and how a value reads. */
const TOP_NUMBERS: {
  column: Exclude<TopColumn, 'name'>;
  label: string;
  title?: string;
  /** The cell's class: its width (cost) or whether a phone shows it (latency), in charts.css. */
  className?: string;
  cell: (r: Row) => string;
}[] = [
  { column: 'requests', label: 'Requests', cell: (r) => countText(r.requests) },
  { column: 'errors', label: 'Errors', title: 'Share of failed requests', cell: (r) => percentText(r.errors) },
  { column: 'cost', label: 'Cost', className: 'c-cost', cell: (r) => costText(r.cost) },
  {
    column: 'latency',
    label: 'Latency',
    title: 'Average latency',
    className: 'c-latency',
    cell: (r) => secondsOrDash(r.latency),
  },
];

/** A row of a top-N table: the group's numbers over the window, and its value to filter on. */
type Row = TopRow & { value: GroupValue };

/** `owners`: a key's owner by key name; a key that has one is named as "owner (key)". */
function topRows(summary: Summary, field: string, owners?: Map<string, ApiKey['owner']>): Row[] {
  return summary.series.map((s) => {
    const t = groupTotals(s.points);
    const owner = s.other ? undefined : owners?.get(String(s.group[field] ?? ''));
    const name = s.other ? 'Others' : groupName(s.group[field]);
    return {
      name: owner ? `${ownerText(owner)} (${name})` : name,
      other: s.other,
      value: s.other ? null : (s.group[field] ?? null),
      requests: t.requests,
      errors: t.requests > 0 ? t.errors / t.requests : null,
      cost: t.cost,
      latency: t.latency,
    };
  });
}

function TopList({
  field,
  title,
  noun,
  loaded,
  onExplore,
  owners,
}: {
  field: string;
  title: string;
  noun: string;
  loaded: Loaded<Summary>;
  onExplore: (extra: Condition[]) => void;
  owners?: Map<string, ApiKey['owner']>;
}) {
  if (loaded.state !== 'done') {
    return (
      <section class="top-list" aria-label={title}>
        <h2>{title}</h2>
        <Pending loaded={loaded} />
      </section>
    );
  }
  const sort = topSorts.value[field] ?? DEFAULT_TOP_SORT;
  const rows = sortTopRows(topRows(loaded.value, field, owners), sort);
  const header = (column: TopColumn, label: string, title?: string, className?: string) => {
    const direction = sort.column === column ? (sort.descending ? 'descending' : 'ascending') : undefined;
    return (
      <th key={column} scope="col" class={className} title={title} aria-sort={direction ?? 'none'}>
        <button type="button" class="sort" onClick={() => setTopSort(field, nextTopSort(sort, column))}>
          {label}
          {direction === 'ascending' ? ' ▲' : direction === 'descending' ? ' ▼' : ''}
        </button>
      </th>
    );
  };
  return (
    <section class="top-list" aria-label={title}>
      <h2>{title}</h2>
      {rows.length === 0 ? (
        <p>No logs in this window.</p>
      ) : (
        <table aria-label={title}>
          <thead>
            <tr>
              {header('name', noun)}
              {TOP_NUMBERS.map((c) => header(c.column, c.label, c.title, c.className))}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.other ? '\u0000other' : r.name}>
                <td title={r.name}>
                  {r.other ? (
                    r.name
                  ) : (
                    <button
                      type="button"
                      class="link"
                      title={`Open the explorer filtered to ${r.name}`}
                      onClick={() => onExplore([groupCondition(field, r.value)])}
                    >
                      {r.name}
                    </button>
                  )}
                </td>
                {TOP_NUMBERS.map((c) => (
                  <td key={c.column} class={c.className}>
                    {c.cell(r)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
