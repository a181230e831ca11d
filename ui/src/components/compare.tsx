/**
 * Two to four logs side by side (loaded lazily, by compare-button.tsx): their figures with the change
 * from the first log, and their input and output as what was said (lib/compare-text.ts: messages by
 * role, an embedding's texts, a transcript; other values as indented JSON), the lines that differ from
 * the first log's marked. The logs are read whole (GET /api/request-logs/{id}/).
 */
import type { JSX } from 'preact';
import { getLog, type LogItem } from '../api';
import { compareText } from '../lib/compare-text';
import { costText, secondsText } from '../lib/format';
import { useLoad } from '../use-load';
import { SidePanel } from './side-panel';

interface Figure {
  label: string;
  value(log: LogItem): number | string | null;
  text?(v: number): string;
}

const FIGURES: Figure[] = [
  { label: 'Model', value: (l) => l.model },
  { label: 'Status', value: (l) => l.status_code },
  { label: 'Customer', value: (l) => l.customer_identifier || '—' },
  { label: 'Prompt tokens', value: (l) => l.prompt_tokens },
  { label: 'Completion tokens', value: (l) => l.completion_tokens },
  { label: 'Cost', value: (l) => l.cost, text: (v) => costText(v) },
  { label: 'Latency', value: (l) => l.latency, text: (v) => secondsText(v) },
  { label: 'Time to first token', value: (l) => l.time_to_first_token, text: (v) => secondsText(v) },
];

/** The lines of `b` that are not in a longest common subsequence with `a` (too long to compare: none). */
export function changedLines(a: readonly string[], b: readonly string[]): Set<number> {
  const changed = new Set<number>();
  if (a.length * b.length > 4_000_000) return changed;
  const n = a.length;
  const m = b.length;
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  let i = 0;
  let j = 0;
  while (j < m) {
    if (i < n && a[i] === b[j]) {
      i++;
      j++;
    } else if (i < n && lcs[i + 1][j] >= lcs[i][j + 1]) i++;
    else changed.add(j++);
  }
  return changed;
}

function Lines({ text, base, first }: { text: string; base: string; first: boolean }) {
  const lines = text.split('\n');
  const changed = first ? new Set<number>() : changedLines(base.split('\n'), lines);
  return (
    <pre class="compare-text">
      {lines.map((line, i) => (
        <span key={i} class={changed.has(i) ? 'differs' : undefined} data-differs={changed.has(i) || undefined}>
          {line}
          {'\n'}
        </span>
      ))}
    </pre>
  );
}

function delta(figure: Figure, base: LogItem, log: LogItem): JSX.Element | null {
  const a = figure.value(base);
  const b = figure.value(log);
  if (typeof a !== 'number' || typeof b !== 'number' || a === b || base === log) return null;
  const d = b - a;
  const shown = figure.text ? figure.text(Math.abs(d)) : String(Math.abs(d));
  const pct = a !== 0 ? ` (${d > 0 ? '+' : '−'}${Math.abs((d / a) * 100).toFixed(0)} %)` : '';
  return <span class="delta">{` ${d > 0 ? '+' : '−'}${shown}${pct}`}</span>;
}

export function Compare({ apiKey, ids, onClose }: { apiKey: string; ids: readonly string[]; onClose(): void }) {
  const [logs] = useLoad(() => Promise.all(ids.map((id) => getLog(apiKey, id))), [apiKey, ids.join()]);
  return (
    <SidePanel label="Compare logs" title={`Compare ${ids.length} logs`} onClose={onClose}>
      {logs.state === 'loading' && <p>Loading…</p>}
      {logs.state === 'error' && (
        <p role="alert" class="error">
          The logs could not be read: {logs.message}
        </p>
      )}
      {logs.state === 'done' && <Table logs={logs.value} />}
    </SidePanel>
  );
}

function Table({ logs }: { logs: LogItem[] }) {
  const base = logs[0];
  return (
    <div class="compare-box">
      <table class="compare" aria-label="Logs compared">
        <thead>
          <tr>
            <th scope="col">
              <span class="visually-hidden">Field</span>
            </th>
            {logs.map((l, i) => (
              <th scope="col" key={l.unique_id} title={l.unique_id}>
                {i === 0 ? 'Log 1 (base)' : `Log ${i + 1}`}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {FIGURES.map((f) => (
            <tr key={f.label}>
              <th scope="row">{f.label}</th>
              {logs.map((l) => {
                const v = f.value(l);
                const differs = l !== base && v !== f.value(base);
                return (
                  <td key={l.unique_id} class={differs ? 'differs' : undefined} data-differs={differs || undefined}>
                    {v === null ? '—' : typeof v === 'number' && f.text ? f.text(v) : String(v)}
                    {delta(f, base, l)}
                  </td>
                );
              })}
            </tr>
          ))}
          {(['input', 'output'] as const).map((field) => (
            <tr key={field}>
              <th scope="row">{field === 'input' ? 'Input' : 'Output'}</th>
              {logs.map((l, i) => (
                <td key={l.unique_id}>
                  <Lines text={compareText(l, field)} base={compareText(base, field)} first={i === 0} />
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
