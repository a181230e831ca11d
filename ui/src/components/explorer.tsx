/**
 * The log explorer: time window, filters, the table of logs with its pages, and the open log. Every
 * change goes through `navigate`, which writes the URL first: the URL is the state (lib/view-state.ts).
 */
import { computed, signal } from '@preact/signals';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, apiRoot, isRetryable, PAGE_SIZE, type FilterOption } from '../api';
import { countLogs, listRows, type RowsPage } from '../api-logs';
import { retryDelay } from '../connection';
import type { Refusal } from '../lib/filter-fields';
import { checkFields, refusalOf } from '../filter-refusal';
import {
  curlFor,
  formatViewState,
  parseViewState,
  PRESETS,
  spanMs,
  type Condition,
  type ViewState,
} from '../lib/view-state';
import { AddToDataset } from './add-to-dataset';
import { ChartStrip } from './chart-strip';
import { CreateDataset } from './create-dataset';
import { ExportDialog } from './export-dialog';
import { ViewsMenu } from './views-menu';
import { AddMatching, SelectAllBar } from './select-all';
import { CompareButton } from './compare-button';
import { explorerAction } from '../palette-state';
import { HeldPill, LiveToggle, useLive } from './live-tail';
import { FilterBar } from './filter-bar';
import { LogPanel } from './log-panel';
import { Pager } from './pager';
import { WiderWindows } from './wider-windows';
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

/**
 * What the table shows: the last page gatelog answered (kept while the next one loads, and when gatelog
 * does not answer), and for which list it is.
 */
interface Shown {
  key: string;
  page: RowsPage;
}

/** Logs loaded after a page, as the reader scrolls past its end (by cursor, or by page number). */
const MORE_SIZE = 200;

/**
 * The cursor each page starts at, by its list key, when the reader came to it from the page before
 * (Next, or scrolling on): that page is then read by keyset, not by offset. A reload of page 3 has none.
 */
const cursors = new Map<string, string>();

const listKeyOf = (state: ViewState) =>
  JSON.stringify([state.window, state.conditions, state.sort, state.page, state.quick ?? []]);

/** The count does not change with the page or the sort. */
const countKeyOf = (state: ViewState) => JSON.stringify([state.window, state.conditions, state.quick ?? []]);

export function Explorer({ apiKey }: { apiKey: string }) {
  const state = view.value;
  const [shown, setShown] = useState<Shown | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const [round, setRound] = useState(0);
  const attempts = useRef(0);
  /** A page fetched to check a filter before applying it: shown at once instead of asked for again. */
  const prefetched = useRef<Shown | null>(null);
  /** The count of the list shown, asked for apart from its rows; null until it arrives. */
  const [counted, setCounted] = useState<{ key: string; count: number } | null>(null);
  /** Logs loaded after the page as the reader scrolled on, and where to go on from. */
  const [more, setMore] = useState<{ key: string; rows: RowsPage['results']; cursor: string | null; done: boolean }>({
    key: '',
    rows: [],
    cursor: null,
    done: false,
  });
  const loadingMore = useRef(false);
  const [options, setOptions] = useState<Record<string, FilterOption>>({});
  const [creating, setCreating] = useState(false);
  const [exporting, setExporting] = useState(false);
  const selected = selection.value;
  const setSelected = (next: ReadonlySet<string>) => (selection.value = next);
  const [adding, setAdding] = useState(false);
  const [addingAll, setAddingAll] = useState(false);
  const [liveOn, setLiveOn] = useState(false);
  const [toolsOpen, setToolsOpen] = useState(false);
  const live = useLive(apiKey, state, liveOn);
  // j/k past the page's end: the next (or previous) page is loaded, then its first (or last) log opened.
  const [openAfterLoad, setOpenAfterLoad] = useState<'first' | 'last' | null>(null);
  const windowKey = JSON.stringify(state.window);
  // An action asked for from the ⌘K palette: its dialog, here.
  const action = explorerAction.value;
  useEffect(() => {
    if (!action) return;
    explorerAction.value = null;
    if (action === 'export') setExporting(true);
    else if (selection.value.size > 0) setAdding(true);
    else setCreating(true);
  }, [action]);
  const listKey = listKeyOf(state);

  useEffect(() => {
    if (state.window.kind === 'relative' && !state.window.at) navigate(anchored(state), true);
  }, [windowKey]);

  const accept = (key: string, page: RowsPage) => {
    attempts.current = 0;
    setShown({ key, page });
    setMore({ key, rows: [], cursor: page.next_cursor, done: page.next === null });
    setLoading(false);
    setError(null);
  };

  // The count and the filter options: asked for once the rows are asked for, shown when they come.
  useEffect(() => {
    if (state.window.kind === 'relative' && !state.window.at) return;
    let stale = false;
    countLogs(apiKey, state, Date.now()).then(
      (answer) => {
        if (stale) return;
        setCounted({ key: countKeyOf(state), count: answer.count ?? 0 });
        if (answer.filter_options) setOptions(answer.filter_options);
      },
      () => undefined, // The rows' call says what is wrong; the count stays "counting".
    );
    return () => {
      stale = true;
    };
  }, [countKeyOf(state), apiKey, round]);

  useEffect(() => {
    attempts.current = 0;
  }, [listKey, apiKey]);

  useEffect(() => {
    if (state.window.kind === 'relative' && !state.window.at) return;
    if (prefetched.current?.key === listKey) {
      accept(listKey, prefetched.current.page);
      prefetched.current = null;
      return;
    }
    let stale = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    setLoading(true);
    listRows(apiKey, state, Date.now(), PAGE_SIZE, cursors.get(listKey) ?? null).then(
      (page) => !stale && accept(listKey, page),
      (err: unknown) => {
        if (stale) return;
        if (isRetryable(err)) {
          // gatelog is not answering: the table stays as it is (the header says so); asked again later.
          timer = setTimeout(() => setRound((r) => r + 1), retryDelay(attempts.current++));
          return;
        }
        setLoading(false);
        const refused = refusalOf(err);
        if (refused) setRefusal(refused);
        setError(err instanceof ApiError ? err.message : String(err));
      },
    );
    return () => {
      stale = true;
      clearTimeout(timer);
    };
  }, [listKey, apiKey, round]);

  /**
   * New filters, applied only once gatelog has listed them: a filter it refuses (an unknown field, a
   * value of the wrong type) is said so, and the table and the URL keep the filters that worked.
   */
  const applyFilters = async (conditions: Condition[], quick: ViewState['quick']): Promise<boolean> => {
    const next: ViewState = { ...state, conditions, page: 1, quick };
    const local = checkFields(conditions);
    if (local) {
      setRefusal(local);
      return false;
    }
    const key = listKeyOf(next);
    setLoading(true);
    try {
      prefetched.current = { key, page: await listRows(apiKey, next, Date.now(), PAGE_SIZE, null) };
    } catch (err) {
      setLoading(false);
      const refused = refusalOf(err);
      if (refused) {
        setRefusal(refused);
        return false;
      }
      // Not the filter's fault (gatelog is down, say): applied, and loaded (and retried) as any list.
    }
    setRefusal(null);
    navigate(next);
    return true;
  };

  const page = shown?.page ?? null;
  const current = shown !== null && shown.key === listKey;
  const rows = page ? (more.key === shown?.key ? [...page.results, ...more.rows] : page.results) : [];
  const count = counted && counted.key === countKeyOf(state) ? counted.count : null;
  const pages = count !== null ? Math.max(1, Math.ceil(count / PAGE_SIZE)) : state.page + (more.done ? 0 : 1);
  // Live: the new logs above the first page of the time order (elsewhere they wait behind the pill).
  const listed = new Set(rows.map((r) => r.unique_id));
  const liveRows = state.page === 1 && state.sort === '-id' ? live.rows.filter((r) => !listed.has(r.unique_id)) : [];
  const shownRows = liveRows.length > 0 ? [...liveRows, ...rows] : rows;
  const openIndex = shownRows.findIndex((r) => r.unique_id === state.log);
  const nothing = !page || (current && rows.length === 0);
  /** The page after the rows loaded: Next goes there, by the cursor after the last row when there is one. */
  const pageAfter = state.page + Math.ceil(rows.length / PAGE_SIZE);
  const goNext = (replace = false) => {
    const next = { ...state, page: pageAfter };
    if (more.cursor && more.key === listKey) cursors.set(listKeyOf(next), more.cursor);
    navigate(next, replace);
  };

  /** Scrolled to the end of the rows: the next logs, by cursor in the time order, else by page number. */
  const loadMore = () => {
    if (!current || loading || more.done || loadingMore.current || more.key !== listKey) return;
    loadingMore.current = true;
    const byCursor = more.cursor !== null;
    const from = byCursor ? state : { ...state, page: pageAfter };
    listRows(apiKey, from, Date.now(), byCursor ? MORE_SIZE : PAGE_SIZE, more.cursor).then(
      (answer) => {
        loadingMore.current = false;
        setMore((m) =>
          m.key !== listKey
            ? m
            : {
                key: m.key,
                rows: [...m.rows, ...answer.results],
                cursor: answer.next_cursor,
                done: answer.next === null,
              },
        );
      },
      () => {
        loadingMore.current = false;
      },
    );
  };
  const nothingWhy = !page ? 'The logs are still loading.' : 'No logs match this time window and these filters.';

  useEffect(() => {
    if (!page || !openAfterLoad || !current) return;
    const target = openAfterLoad === 'first' ? rows[0] : rows[rows.length - 1];
    setOpenAfterLoad(null);
    if (target) navigate({ ...state, log: target.unique_id }, true);
  }, [page]);

  const metadataNames = current ? (page?.metadataFilters ?? []) : [];

  // On a phone, the time window and the search stay on top and the rest folds behind "Filters"
  // (unfolded while logs are ticked: their actions are in the toolbar).
  const unfolded = toolsOpen || selected.size > 0;
  const hiddenFilters = state.conditions.filter((c) => c.field !== 'search').length + (state.quick?.length ?? 0);

  return (
    <section class={`explorer${unfolded ? ' tools-open' : ''}`} aria-label="Logs">
      <div class="toolbar">
        <TimeControls state={state} />
        <div class="toolbar-actions" id="explorer-tools">
          {selected.size > 0 && (
            <>
              <button type="button" class="primary" onClick={() => setAdding(true)}>
                Add {selected.size} to dataset…
              </button>
              <button type="button" onClick={() => setSelected(new Set())}>
                Clear selection
              </button>
              <CompareButton apiKey={apiKey} ids={[...selected]} />
            </>
          )}
          <LiveToggle state={state} on={liveOn} onChange={setLiveOn} />
          <ViewsMenu apiKey={apiKey} state={state} />
          <ColumnPicker
            metadataKeys={Object.keys(options)
              .filter((f) => f.startsWith('metadata__'))
              .map((f) => f.slice('metadata__'.length))}
          />
          <CopyButton text={() => curlFor(apiRoot(), state, Date.now(), PAGE_SIZE)} label="Copy as cURL" />
          <button
            type="button"
            disabled={nothing}
            title={nothing ? nothingWhy : 'Every matching log as CSV or JSON Lines'}
            aria-describedby={nothing ? 'why-nothing' : undefined}
            onClick={() => setExporting(true)}
          >
            Export…
          </button>
          <button
            type="button"
            class={selected.size > 0 ? undefined : 'primary'}
            disabled={nothing}
            title={nothing ? nothingWhy : 'A dataset of the logs this window and these filters match'}
            aria-describedby={nothing ? 'why-nothing' : undefined}
            onClick={() => setCreating(true)}
          >
            Create dataset…
          </button>
          {nothing && (
            <span id="why-nothing" class="visually-hidden">
              {nothingWhy}
            </span>
          )}
        </div>
      </div>
      <FilterBar
        conditions={state.conditions}
        options={options}
        refusal={refusal}
        onChange={(conditions) => applyFilters(conditions, state.quick)}
        quick={state.quick ?? []}
        metadataNames={metadataNames}
        onQuickChange={(quick) => applyFilters(state.conditions, quick.length > 0 ? quick : undefined)}
        beside={
          <button
            type="button"
            class="fold-toggle"
            aria-expanded={unfolded}
            aria-controls="explorer-tools"
            onClick={() => setToolsOpen(!toolsOpen)}
          >
            {hiddenFilters > 0 ? `Filters (${hiddenFilters})` : 'Filters'}
          </button>
        }
      />
      <ChartStrip
        apiKey={apiKey}
        state={state}
        onWindow={(window) => navigate({ ...state, page: 1, log: null, window })}
      />
      {error && !refusal && (
        <p role="alert" class="error">
          The logs could not be listed: {error}
        </p>
      )}
      <div class="summary" aria-live="polite">
        {loading && !page && 'Loading…'}
        {page &&
          (current && !loading && rows.length === 0
            ? state.conditions.length > 0 || state.quick
              ? 'No logs match these filters in this time window.'
              : 'No logs in this time window yet: calls through the proxy and the logging API appear here.'
            : current && !loading
              ? `${(state.page - 1) * PAGE_SIZE + 1}–${(state.page - 1) * PAGE_SIZE + shownRows.length} of ${count === null ? '… (counting)' : count + liveRows.length} ${count === 1 ? 'log' : 'logs'}`
              : 'Loading…')}
      </div>
      {page && current && !loading && rows.length === 0 && (state.conditions.length > 0 || state.quick) && (
        <WiderWindows
          apiKey={apiKey}
          state={state}
          onWindow={(window) => navigate({ ...state, page: 1, log: null, window })}
        />
      )}
      {current && (
        <SelectAllBar
          listKey={countKeyOf(state)}
          pageTicked={rows.length > 0 && rows.every((r) => selected.has(r.unique_id))}
          shown={rows.length}
          count={count}
          onClear={() => setSelected(new Set())}
          onAdd={() => setAddingAll(true)}
          onExport={() => setExporting(true)}
        />
      )}
      <HeldPill live={live} />
      {shownRows.length > 0 && (
        <LogTable
          rows={shownRows}
          busy={loading || !current}
          sort={state.sort}
          openId={state.log}
          onEnd={loadMore}
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
      {page && current && (
        <Pager
          page={state.page}
          count={count ?? (more.done ? (state.page - 1) * PAGE_SIZE + rows.length : pageAfter * PAGE_SIZE)}
          size={PAGE_SIZE}
          onPage={(p) => {
            // A new page starts at its top, as a pager's reader expects (and scrolled there, the rows
            // would not load on past it on their own).
            window.scrollTo(0, 0);
            if (p === state.page + 1) goNext();
            else navigate({ ...state, page: p });
          }}
        />
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
        <ExportDialog apiKey={apiKey} state={state} count={count} onClose={() => setExporting(false)} />
      )}
      {addingAll && <AddMatching apiKey={apiKey} state={state} onClose={() => setAddingAll(false)} />}
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
            const next = shownRows[openIndex + delta];
            if (next) return navigate({ ...state, log: next.unique_id }, true);
            // Past the page's edge: the filtered set goes on on the next or previous page.
            const to = delta === 1 ? pageAfter : state.page - 1;
            if (to < 1 || (delta === 1 && (more.done || to > pages))) return;
            setOpenAfterLoad(delta === 1 ? 'first' : 'last');
            if (delta === 1) goNext(true);
            else navigate({ ...state, page: to }, true);
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
      <button
        type="button"
        title="List again up to now"
        onClick={() => navigate({ ...state, page: 1, window: freshWindow(state) })}
      >
        Refresh
      </button>
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
