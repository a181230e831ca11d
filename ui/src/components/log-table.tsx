/**
 * The table of logs: one row per log, previews from the server (never whole bodies), sortable columns,
 * and the columns shown chosen by the user (kept in localStorage).
 */
import { signal } from '@preact/signals';
import type { JSX } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import type { LogItem } from '../api';
import { costText, preview, secondsText, UNKNOWN_COST, UNKNOWN_COST_TITLE } from '../lib/format';
import { TimeText } from './time-text';
import { useRowWindow } from './virtual-rows';

interface Column {
  id: string;
  /** The class of its cells (`c-<cls>`): the id, but for metadata columns, whose keys may hold anything. */
  cls?: string;
  label: string;
  /** The list's sort_by field, for a sortable column. */
  sort?: string;
  numeric?: boolean;
  preview?: boolean;
  /** The log fields the column shows: what a CSV export of the shown columns holds. */
  fields: readonly string[];
  cell(log: LogItem): JSX.Element | string | number;
}

export const COLUMNS: readonly Column[] = [
  { id: 'time', fields: ['timestamp'], label: 'Time', sort: 'id', cell: (log) => <TimeText iso={log.timestamp} /> },
  {
    id: 'status',
    fields: ['status_code'],
    label: 'Status',
    cell: (log) => <span class={`status ${log.status === 'error' ? 'bad' : 'good'}`}>{log.status_code}</span>,
  },
  { id: 'type', fields: ['log_type'], label: 'Type', cell: (log) => log.log_type },
  { id: 'model', fields: ['model'], label: 'Model', cell: (log) => <span title={log.model}>{log.model}</span> },
  { id: 'provider', fields: ['provider_id'], label: 'Provider', cell: (log) => String(log.provider_id ?? '') },
  {
    id: 'customer',
    fields: ['customer_identifier'],
    label: 'Customer',
    cell: (log) => <span title={log.customer_identifier}>{log.customer_identifier}</span>,
  },
  // The server's previews (what was written, what was answered); a log stored before them has none.
  {
    id: 'input',
    fields: ['input'],
    label: 'Input',
    preview: true,
    cell: (log) => log.input_preview ?? preview(log.input),
  },
  {
    id: 'output',
    fields: ['output', 'transcript'],
    label: 'Output',
    preview: true,
    cell: (log) =>
      log.output_preview ?? preview(log.output ?? (typeof log.transcript === 'string' ? log.transcript : null)),
  },
  {
    id: 'tokens',
    fields: ['prompt_tokens', 'completion_tokens'],
    label: 'Tokens',
    sort: 'all_tokens',
    numeric: true,
    cell: (log) => log.prompt_tokens + log.completion_tokens,
  },
  {
    id: 'cost',
    fields: ['cost'],
    label: 'Cost',
    sort: 'cost',
    numeric: true,
    cell: (log) =>
      log.cost === null || log.cost === undefined ? (
        <span class="unknown" title={UNKNOWN_COST_TITLE}>
          {UNKNOWN_COST}
          <span class="visually-hidden"> (price unknown)</span>
        </span>
      ) : (
        costText(log.cost)
      ),
  },
  {
    id: 'latency',
    fields: ['latency'],
    label: 'Latency',
    sort: 'latency',
    numeric: true,
    cell: (log) => secondsText(log.latency),
  },
  {
    id: 'ttft',
    fields: ['time_to_first_token'],
    label: 'TTFT',
    sort: 'time_to_first_token',
    numeric: true,
    cell: (log) => (log.time_to_first_token === null ? '' : secondsText(log.time_to_first_token)),
  },
  // Answered from the response cache: "hit"; a call sent to the provider shows nothing.
  { id: 'cache', fields: ['cache_hit'], label: 'Cache', cell: (log) => (log.cache_hit === true ? 'hit' : '') },
  { id: 'environment', fields: ['environment'], label: 'Environment', cell: (log) => String(log.environment ?? '') },
  {
    id: 'key',
    fields: ['organization_key__name'],
    label: 'Key',
    cell: (log) => String(log.organization_key__name ?? ''),
  },
  // Why a call failed, as the filter language names it (error_code:rate_limited).
  {
    id: 'error_code',
    fields: ['error_code'],
    label: 'Error code',
    cell: (log) => {
      const code = log.error_code ?? '';
      return <span title={code}>{code}</span>;
    },
  },
  {
    id: 'error',
    fields: ['error_message'],
    label: 'Error',
    preview: true,
    cell: (log) => {
      const text = typeof log.error_message === 'string' ? log.error_message : '';
      return <span title={text}>{text}</span>;
    },
  },
];

/** Metadata columns are `metadata__<key>`, as the filter language and the export name the key. */
const METADATA = 'metadata__';

/** A column of one metadata key's value (strings as they are, anything else as JSON). */
function metadataColumn(id: string): Column {
  const key = id.slice(METADATA.length);
  return {
    id,
    cls: 'meta',
    fields: [id],
    label: key,
    preview: true,
    cell: (log) => {
      const value = log.metadata?.[key];
      const text =
        value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value);
      return <span title={text}>{text}</span>;
    },
  };
}

const isMetadataId = (id: string) => id.startsWith(METADATA) && id.length > METADATA.length;

/** The columns of these ids: the fixed ones in the table's order, then metadata keys in the order chosen. */
function columnsOf(ids: readonly string[]): Column[] {
  return [...COLUMNS.filter((c) => ids.includes(c.id)), ...ids.filter(isMetadataId).map(metadataColumn)];
}

const STORE = 'gatelog.columns';
const DEFAULT_COLUMNS = ['time', 'status', 'type', 'model', 'customer', 'input', 'output', 'tokens', 'cost', 'latency'];

function savedColumns(): string[] {
  try {
    const ids = JSON.parse(localStorage.getItem(STORE) ?? 'null') as unknown;
    if (Array.isArray(ids) && ids.every((id) => COLUMNS.some((c) => c.id === id) || isMetadataId(String(id))))
      return ids as string[];
  } catch {
    // Unreadable: the defaults.
  }
  return DEFAULT_COLUMNS;
}

export const shownColumns = signal<string[]>(savedColumns());

/** The fields of the columns shown, after the log's id: a CSV export of what the table shows. */
export const shownFields = (): string[] => ['unique_id', ...columnsOf(shownColumns.value).flatMap((c) => c.fields)];

/** Shows these columns (the known ones, in the table's order) and keeps the choice. */
export function setShownColumns(ids: readonly string[]): void {
  const next = columnsOf(ids).map((c) => c.id);
  shownColumns.value = next.length > 0 ? next : DEFAULT_COLUMNS;
  localStorage.setItem(STORE, JSON.stringify(shownColumns.value));
}

function toggleColumn(id: string): void {
  const next = shownColumns.value.includes(id)
    ? shownColumns.value.filter((c) => c !== id)
    : columnsOf([...shownColumns.value, id]).map((c) => c.id);
  shownColumns.value = next;
  localStorage.setItem(STORE, JSON.stringify(next));
}

/** The column chooser: a checkbox per column. */
/** The columns to choose from: the fixed ones, then one per metadata key the logs have (and any shown). */
export function ColumnPicker({ metadataKeys = [] }: { metadataKeys?: readonly string[] }) {
  const keys = [
    ...new Set([...metadataKeys.map((k) => `${METADATA}${k}`), ...shownColumns.value.filter(isMetadataId)]),
  ];
  const choice = (c: Column, label: string) => (
    <label key={c.id}>
      <input type="checkbox" checked={shownColumns.value.includes(c.id)} onChange={() => toggleColumn(c.id)} /> {label}
    </label>
  );
  return (
    <details class="columns">
      <summary>Columns</summary>
      <fieldset>
        <legend>Columns shown</legend>
        {COLUMNS.map((c) => choice(c, c.label))}
      </fieldset>
      {keys.length > 0 && (
        <fieldset>
          <legend>Metadata</legend>
          {keys.map((id) => choice(metadataColumn(id), `metadata.${id.slice(METADATA.length)}`))}
        </fieldset>
      )}
    </details>
  );
}

interface Props {
  rows: LogItem[];
  /** The rows shown are not (yet) those of the list asked for: it is loading, or gatelog is not answering. */
  busy?: boolean;
  sort: string;
  openId: string | null;
  onSort(sort: string): void;
  onOpen(id: string): void;
  /** The logs ticked (to add to a dataset), and how the ticks change. */
  selected: ReadonlySet<string>;
  onSelect(ids: readonly string[], on: boolean): void;
  /** The last rows are in view: more may be loaded after them. */
  onEnd?(): void;
}

/**
 * The table fits its box (fixed layout): every column but the previews has a width of its own (in
 * styles.css, by `col.c-<id>`), and the previews share what is left, cut with an ellipsis. Below the
 * phone breakpoint each row is a card (model and status, then time, cost and latency, then the input).
 */
export function LogTable({ rows, busy = false, sort, openId, onSort, onOpen, selected, onSelect, onEnd }: Props) {
  const body = useRef<HTMLTableSectionElement>(null);
  const shown = useRowWindow(rows.length, body);
  // Scrolled to within a screenful of the rows' end: more may be loaded. Only once the reader has
  // scrolled: a page that fits the window stays the page it is (its pager says which).
  useEffect(() => {
    if (!onEnd) return;
    let frame = 0;
    const check = () => {
      frame = 0;
      const el = body.current;
      if (el && window.scrollY > 0 && el.getBoundingClientRect().bottom < window.innerHeight * 2) onEnd();
    };
    const schedule = () => {
      if (!frame) frame = requestAnimationFrame(check);
    };
    schedule();
    window.addEventListener('scroll', schedule, { passive: true });
    return () => {
      cancelAnimationFrame(frame);
      window.removeEventListener('scroll', schedule);
    };
  }, [onEnd, rows.length]);
  const allTicked = rows.length > 0 && rows.every((r) => selected.has(r.unique_id));
  const columns = columnsOf(shownColumns.value);
  const header = (column: Column) => {
    const field = column.sort;
    if (!field) {
      return (
        <th scope="col" role="columnheader" key={column.id} class={`c-${column.cls ?? column.id}`}>
          {column.label}
        </th>
      );
    }
    const direction = sort === field ? 'ascending' : sort === `-${field}` ? 'descending' : undefined;
    return (
      <th
        scope="col"
        role="columnheader"
        key={column.id}
        class={`c-${column.cls ?? column.id}`}
        aria-sort={direction ?? 'none'}
      >
        <button type="button" onClick={() => onSort(sort === `-${field}` ? field : `-${field}`)}>
          {column.label}
          {direction === 'ascending' ? ' ▲' : direction === 'descending' ? ' ▼' : ''}
        </button>
      </th>
    );
  };
  return (
    <div class="logs-box">
      <table class="logs" role="grid" aria-label="Logs" aria-rowcount={rows.length + 1} aria-busy={busy}>
        <colgroup>
          <col class="c-tick" />
          {columns.map((c) => (
            <col key={c.id} class={`c-${c.cls ?? c.id}`} />
          ))}
        </colgroup>
        <thead>
          <tr role="row">
            <th scope="col" role="columnheader" class="tick">
              <input
                type="checkbox"
                aria-label="Select every log of this page"
                checked={allTicked}
                onChange={() =>
                  onSelect(
                    rows.map((r) => r.unique_id),
                    !allTicked,
                  )
                }
              />
            </th>
            {columns.map(header)}
          </tr>
        </thead>
        <tbody ref={body}>
          {shown.before > 0 && <Spacer height={shown.before} span={columns.length + 1} />}
          {rows.slice(shown.start, shown.end).map((log, i) => (
            <tr
              key={log.unique_id}
              role="row"
              aria-rowindex={shown.start + i + 2}
              tabIndex={0}
              aria-selected={log.unique_id === openId}
              data-log-id={log.unique_id}
              onClick={() => onOpen(log.unique_id)}
              onKeyDown={(e) => {
                if (e.key === 'Enter') onOpen(log.unique_id);
              }}
            >
              <td role="gridcell" class="tick" onClick={(e) => e.stopPropagation()}>
                <input
                  type="checkbox"
                  aria-label={`Select log ${log.unique_id}`}
                  checked={selected.has(log.unique_id)}
                  onChange={() => onSelect([log.unique_id], !selected.has(log.unique_id))}
                />
              </td>
              {columns.map((c) => (
                <td
                  role="gridcell"
                  key={c.id}
                  class={`c-${c.cls ?? c.id}${c.numeric ? ' num' : ''}${c.preview ? ' preview' : ''}`}
                  data-label={c.label}
                >
                  {c.cell(log)}
                </td>
              ))}
            </tr>
          ))}
          {shown.after > 0 && <Spacer height={shown.after} span={columns.length + 1} />}
        </tbody>
      </table>
    </div>
  );
}

/** The height of the rows not rendered (virtualised), hidden from assistive technology. */
function Spacer({ height, span }: { height: number; span: number }) {
  return (
    <tr class="spacer" aria-hidden="true">
      <td colSpan={span} style={{ height: `${height}px` }} />
    </tr>
  );
}
