/**
 * Live tail in the explorer: with Live on, new logs that match arrive over the stream (live-stream.ts,
 * loaded when first switched on) and are put above the rows — unless the reader has scrolled down or has
 * a log open, when a "N new logs" pill says so instead of moving the rows under them; the pill shows
 * them. The stream takes URL filters (equality and `not`), so Live is offered for such filters only.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { LogItem } from '../api';
import type { Condition, ViewState } from '../lib/view-state';

/** The stream's URL filters for a state; null when a condition has no URL form (other operators, lists). */
export function tailQuery(state: ViewState): string | null {
  const q = new URLSearchParams();
  for (const c of state.conditions) {
    if ((c.operator !== '' && c.operator !== 'not') || c.values.length !== 1) return null;
    q.set(`${c.field}[value]`, String(c.values[0]));
    if (c.operator === 'not') q.set(`${c.field}[operator]`, 'not');
  }
  for (const [name, value] of state.quick ?? []) q.append(name, value);
  return q.toString();
}

const keyOf = (conditions: readonly Condition[], quick: ViewState['quick']) =>
  JSON.stringify([conditions, quick ?? []]);

export interface Live {
  on: boolean;
  /** New logs shown above the list's rows, newest first. */
  rows: LogItem[];
  /** New logs held back (the reader scrolled or has a log open), newest first. */
  held: LogItem[];
  showHeld(): void;
}

/** The live tail of a state while `on`: its new logs, shown or held. */
export function useLive(apiKey: string, state: ViewState, on: boolean): Live {
  const [rows, setRows] = useState<LogItem[]>([]);
  const [held, setHeld] = useState<LogItem[]>([]);
  const query = on ? tailQuery(state) : null;
  const filterKey = keyOf(state.conditions, state.quick);
  const stateRef = useRef(state);
  stateRef.current = state;

  // Other filters: the logs that came for the old ones go. (Switched off, those shown stay.)
  useEffect(() => {
    setRows([]);
    setHeld([]);
  }, [filterKey]);

  useEffect(() => {
    if (query === null) return;
    let close: (() => void) | null = null;
    let gone = false;
    void import('../live-stream').then(({ openTail }) => {
      if (gone) return;
      close = openTail(apiKey, query, (log) => {
        // Scrolled down or reading a log: held, so that nothing moves under the reader.
        if (window.scrollY > 40 || stateRef.current.log) setHeld((h) => [log, ...h]);
        else setRows((r) => [log, ...r]);
      });
    });
    return () => {
      gone = true;
      close?.();
    };
  }, [apiKey, query, filterKey]);

  return {
    on: query !== null,
    rows,
    held,
    showHeld: () => {
      setRows((r) => [...held, ...r]);
      setHeld([]);
      window.scrollTo({ top: 0 });
    },
  };
}

/** The Live switch: pressed while the tail is open; off (and saying why) for filters it cannot follow. */
export function LiveToggle({ state, on, onChange }: { state: ViewState; on: boolean; onChange(on: boolean): void }) {
  const possible = tailQuery(state) !== null;
  return (
    <button
      type="button"
      aria-pressed={on && possible}
      disabled={!possible}
      title={
        possible
          ? 'New logs as they arrive'
          : 'Live follows filters of the URL form only (equals, not equals, one value each)'
      }
      onClick={() => onChange(!on)}
    >
      {on && possible ? '● Live' : 'Live'}
    </button>
  );
}

/** "N new logs": the held logs, shown when clicked. */
export function HeldPill({ live }: { live: Live }) {
  if (live.held.length === 0) return null;
  return (
    <button type="button" class="new-logs-pill primary" onClick={live.showHeld}>
      {live.held.length} new {live.held.length === 1 ? 'log' : 'logs'}
    </button>
  );
}
