/**
 * The log explorer: time window, filters, the table of logs with its pages, and the open log. Every
 * change goes through `navigate`, which writes the URL first: the URL is the state (lib/view-state.ts).
 */
import { computed, signal } from '@preact/signals';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, apiRoot, listLogs, PAGE_SIZE, type FilterOption, type LogPage } from '../api';
import { curlFor, formatViewState, parseViewState, PRESETS, spanMs, type ViewState } from '../lib/view-state';
import { AddToDataset } from './add-to-dataset';
import { CreateDataset } from './create-dataset';
import { ExportDialog } from './export-dialog';
import { ViewsMenu } from './views-menu';
import { FilterBar } from './filter-bar';
import { LogPanel } from './log-panel';
import { Pager } from './pager';
import { ColumnPicker, LogTable } from './log-table';
import { timeZone } from './time-text';
import { timeText } from '../lib/format';
import { go, search } from '../router';

const view = computed(() => parseViewState(search.value));
/**
 * Ticked logs (to add to a dataset): kept across pages and screens until they are added or cleared; not
 * in the URL (a selection is not a screen).
 */
const selection = signal<ReadonlySet<string>>(new Set());

export function navigate(next: ViewState, replace = false): void {
  go(formatViewState(next), replace);
}

/** A relative window is anchored once: pages read the same stretch of time while new logs arrive. */
function anchored(state: ViewState): ViewState {
  return state.window.kind === 'relative' && !state.window.at
    ? { ...state, window: { ...state.window, at: new Date().toISOString() } }
    : state;
}

type Loaded = { state: 'loading' } | { state: 'error'; message: string } | { state: 'done'; page: LogPage };

export function Explorer({ apiKey }: { apiKey: string }) {
  const state = view.value;
  const [loaded, setLoaded] = useState<Loaded>({ state: 'loading' });
  const [options, setOptions] = useState<Record<string, FilterOption>>({});
  const [creating, setCreating] = useState(false);
  const [exporting, setExporting] = useState(false);
  const selected = selection.value;
  const setSelected = (next: ReadonlySet<string>) => (selection.value = next);
  const [adding, setAdding] = useState(false);
  // j/k past the page's end: the next (or previous) page is loaded, then its first (or last) log opened.
  const [openAfterLoad, setOpenAfterLoad] = useState<'first' | 'last' | null>(null);
  const windowKey = JSON.stringify(state.window);
  const listKey = JSON.stringify([state.window, state.conditions, state.sort, state.page]);

  useEffect(() => {
    if (state.window.kind === 'relative' && !state.window.at) navigate(anchored(state), true);
  }, [windowKey]);

  useEffect(() => {
    if (state.window.kind === 'relative' && !state.window.at) return;
    let stale = false;
    setLoaded({ state: 'loading' });
    listLogs(apiKey, state, Date.now(), true).then(
      (page) => {
        if (stale) return;
        setLoaded({ state: 'done', page });
        if (page.filter_options) setOptions(page.filter_options);
      },
      (err: unknown) => {
        if (!stale) setLoaded({ state: 'error', message: err instanceof ApiError ? err.message : String(err) });
      },
    );
    return () => {
      stale = true;
    };
  }, [listKey, apiKey]);

  const page = loaded.state === 'done' ? loaded.page : null;
  const rows = page?.results ?? [];
  const pages = page ? Math.max(1, Math.ceil(page.count / PAGE_SIZE)) : 1;
  const openIndex = rows.findIndex((r) => r.unique_id === state.log);

  useEffect(() => {
    if (!page || !openAfterLoad) return;
    const target = openAfterLoad === 'first' ? rows[0] : rows[rows.length - 1];
    setOpenAfterLoad(null);
    if (target) navigate({ ...state, log: target.unique_id }, true);
  }, [page]);

  return (
    <section class="explorer" aria-label="Logs">
      <div class="toolbar">
        <TimeControls state={state} />
        <div class="toolbar-actions">
          {selected.size > 0 && (
            <>
              <button type="button" onClick={() => setAdding(true)}>
                Add {selected.size} to dataset…
              </button>
              <button type="button" onClick={() => setSelected(new Set())}>
                Clear selection
              </button>
            </>
          )}
          <ViewsMenu apiKey={apiKey} state={state} />
          <ColumnPicker />
          <button type="button" disabled={!page || page.count === 0} onClick={() => setExporting(true)}>
            Export…
          </button>
          <button type="button" disabled={!page || page.count === 0} onClick={() => setCreating(true)}>
            Create dataset…
          </button>
          <CopyButton text={() => curlFor(apiRoot(), state, Date.now(), PAGE_SIZE)} label="Copy as cURL" />
          <button type="button" onClick={() => navigate({ ...state, page: 1, window: freshWindow(state) })}>
            Refresh
          </button>
        </div>
      </div>
      <FilterBar
        conditions={state.conditions}
        options={options}
        onChange={(conditions) => navigate({ ...state, conditions, page: 1 })}
      />
      {loaded.state === 'error' && (
        <p role="alert" class="error">
          The logs could not be listed: {loaded.message}
        </p>
      )}
      <div class="summary" aria-live="polite">
        {loaded.state === 'loading' && 'Loading…'}
        {page &&
          (page.count === 0
            ? state.conditions.length > 0
              ? 'No logs match these filters in this time window.'
              : 'No logs in this time window yet: calls through the proxy and the logging API appear here.'
            : `${(state.page - 1) * PAGE_SIZE + 1}–${(state.page - 1) * PAGE_SIZE + rows.length} of ${page.count} logs`)}
      </div>
      {rows.length > 0 && (
        <LogTable
          rows={rows}
          sort={state.sort}
          openId={state.log}
          onSort={(sort) => navigate({ ...state, sort, page: 1 })}
          onOpen={(id) => navigate({ ...state, log: id })}
          selected={selected}
          onSelect={(ids, on) => {
            const next = new Set(selected);
            for (const id of ids) {
              if (on) next.add(id);
              else next.delete(id);
            }
            setSelected(next);
          }}
        />
      )}
      {page && (
        <Pager page={state.page} count={page.count} size={PAGE_SIZE} onPage={(p) => navigate({ ...state, page: p })} />
      )}
      {adding && (
        <AddToDataset
          apiKey={apiKey}
          ids={[...selected]}
          onClose={() => setAdding(false)}
          onAdded={() => setSelected(new Set())}
        />
      )}
      {exporting && page && (
        <ExportDialog apiKey={apiKey} state={state} count={page.count} onClose={() => setExporting(false)} />
      )}
      {creating && <CreateDataset apiKey={apiKey} state={state} onClose={() => setCreating(false)} />}
      {state.log && (
        <LogPanel
          apiKey={apiKey}
          id={state.log}
          onClose={() => navigate({ ...state, log: null })}
          onFilter={(field, value, exclude) => {
            const rest = state.conditions.filter((c) => c.field !== field);
            const condition = { field, operator: exclude ? ('not' as const) : ('' as const), values: [value] };
            navigate({ ...state, page: 1, conditions: [...rest, condition] });
          }}
          onStep={(delta) => {
            if (openIndex < 0) return;
            const next = rows[openIndex + delta];
            if (next) return navigate({ ...state, log: next.unique_id }, true);
            // Past the page's edge: the filtered set goes on on the next or previous page.
            const to = state.page + delta;
            if (to < 1 || to > pages) return;
            setOpenAfterLoad(delta === 1 ? 'first' : 'last');
            navigate({ ...state, page: to }, true);
          }}
        />
      )}
    </section>
  );
}

function freshWindow(state: ViewState): ViewState['window'] {
  return state.window.kind === 'relative' ? { ...state.window, at: new Date().toISOString() } : state.window;
}

function TimeControls({ state }: { state: ViewState }) {
  const current = state.window.kind === 'relative' ? state.window.span : '';
  const [typed, setTyped] = useState('');
  const [invalid, setInvalid] = useState(false);
  const setSpan = (span: string) =>
    navigate({ ...state, page: 1, window: { kind: 'relative', span, at: new Date().toISOString() } });
  return (
    <div class="time" role="group" aria-label="Time window">
      {PRESETS.map((span) => (
        <button type="button" key={span} aria-pressed={current === span} onClick={() => setSpan(span)}>
          {span}
        </button>
      ))}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (spanMs(typed) === null) return setInvalid(true);
          setInvalid(false);
          setSpan(typed.trim());
        }}
      >
        <input
          aria-label="Last… (e.g. 90m, 3d)"
          placeholder={current && !PRESETS.includes(current as never) ? current : '90m, 3d…'}
          aria-invalid={invalid}
          value={typed}
          size={8}
          onInput={(e) => setTyped((e.currentTarget as HTMLInputElement).value)}
        />
      </form>
      <span class="window-end" title={windowTitle(state)}>
        {state.window.kind === 'relative'
          ? state.window.at
            ? `to ${timeText(state.window.at, timeZone.value)}`
            : ''
          : `${timeText(state.window.from, timeZone.value)} – ${timeText(state.window.to, timeZone.value)}`}
      </span>
    </div>
  );
}

const windowTitle = (state: ViewState) =>
  state.window.kind === 'relative' ? (state.window.at ?? '') : `${state.window.from} – ${state.window.to}`;

/** Copies a text made when clicked; says so for a moment. */
function CopyButton({ text, label }: { text: () => string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      onClick={() => {
        void navigator.clipboard?.writeText(text()).then(() => {
          setCopied(true);
          setTimeout(() => setCopied(false), 1500);
        });
      }}
    >
      {copied ? 'Copied' : label}
    </button>
  );
}
