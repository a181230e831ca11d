/**
 * When a filtered list finds nothing in its window, the wider windows it could look in, with how many
 * logs each holds: "Search the last 7 days (12)". A search typed in the default hour otherwise says
 * only that nothing matched, and the user has to guess that the log is older.
 */
import { countMatches } from '../api-logs';
import { spanMs, type TimeWindow, type ViewState } from '../lib/view-state';
import { useLoad } from '../use-load';

const WIDER = [
  { span: '7d', label: 'the last 7 days' },
  { span: '30d', label: 'the last 30 days' },
] as const;

/** The preset windows wider than a relative window (none for an absolute one: it was chosen). */
export function widerSpans(window: TimeWindow): (typeof WIDER)[number][] {
  if (window.kind !== 'relative') return [];
  const current = spanMs(window.span) ?? 0;
  return WIDER.filter((w) => (spanMs(w.span) ?? 0) > current);
}

export function WiderWindows({
  apiKey,
  state,
  onWindow,
}: {
  apiKey: string;
  state: ViewState;
  onWindow(window: TimeWindow): void;
}) {
  const spans = widerSpans(state.window);
  const stateKey = JSON.stringify([state.conditions, state.quick ?? null, spans.map((s) => s.span)]);
  const [counts] = useLoad(() => {
    const now = Date.now();
    // A count that fails (a search too broad for a month) leaves its button without a number.
    return Promise.all(
      spans.map((s) =>
        countMatches(apiKey, { ...state, window: { kind: 'relative', span: s.span, at: null } }, now).catch(() => null),
      ),
    );
  }, [apiKey, stateKey]);
  if (spans.length === 0) return null;
  return (
    <p class="wider-windows" data-testid="wider-windows">
      {spans.map((s, i) => {
        const count = counts.state === 'done' ? counts.value[i] : undefined;
        const shown =
          count === undefined ? ' (counting…)' : count === null ? '' : ` (${count.toLocaleString('en-US')})`;
        return (
          <button
            type="button"
            key={s.span}
            disabled={count === 0}
            onClick={() => onWindow({ kind: 'relative', span: s.span, at: null })}
          >
            {`Search ${s.label}${shown}`}
          </button>
        );
      })}
    </p>
  );
}
