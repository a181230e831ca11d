/**
 * The time window of the dashboard, as the explorer's (lib/view-state.ts): presets, a typed window
 * ("90m", "3d"), Refresh (the same window up to now), and the window's end or bounds in the chosen zone.
 */
import { useState } from 'preact/hooks';
import { timeText } from '../lib/format';
import { PRESETS, spanMs, type TimeWindow } from '../lib/view-state';
import { timeZone } from './time-text';

export function WindowPicker({ window, onChange }: { window: TimeWindow; onChange: (next: TimeWindow) => void }) {
  const current = window.kind === 'relative' ? window.span : '';
  const [typed, setTyped] = useState('');
  const [invalid, setInvalid] = useState(false);
  const setSpan = (span: string) => onChange({ kind: 'relative', span, at: new Date().toISOString() });
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
        title="Show the same window up to now"
        onClick={() => onChange(window.kind === 'relative' ? { ...window, at: new Date().toISOString() } : window)}
      >
        Refresh
      </button>
      <span class="window-end" title={window.kind === 'relative' ? (window.at ?? '') : `${window.from} – ${window.to}`}>
        {window.kind === 'relative'
          ? window.at
            ? `to ${timeText(window.at, timeZone.value)}`
            : ''
          : `${timeText(window.from, timeZone.value)} – ${timeText(window.to, timeZone.value)}`}
      </span>
    </div>
  );
}
