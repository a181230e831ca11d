/** How values read in the UI: short previews, costs in dollars, durations in s or ms. Pure. */

/** One line of a JSON-text field: the text of a message or a string when it is one, else compact JSON. */
export function preview(text: string | null, max = 120): string {
  if (text === null || text === '') return '';
  let shown = text;
  try {
    const value = JSON.parse(text) as unknown;
    shown = readable(value);
  } catch {
    // A preview cut by the server is not JSON: shown as it is.
  }
  shown = shown.replace(/\s+/g, ' ').trim();
  return shown.length > max ? `${shown.slice(0, max - 1)}…` : shown;
}

function readable(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    const last = value[value.length - 1] as { content?: unknown } | undefined;
    if (last && typeof last === 'object' && typeof last.content === 'string') return last.content;
    if (value.every((v) => typeof v === 'string')) return value.join(' | ');
  }
  if (value && typeof value === 'object') {
    const content = (value as { content?: unknown }).content;
    if (typeof content === 'string') return content;
    const text = (value as { text?: unknown }).text;
    if (typeof text === 'string') return text;
  }
  return JSON.stringify(value);
}

/** Dollars with three significant digits below a cent (never exponent notation), cents above. */
export function costText(cost: number): string {
  if (cost === 0) return '$0';
  if (cost >= 0.01) return `$${cost.toFixed(2)}`;
  const decimals = Math.min(12, 2 - Math.floor(Math.log10(cost)));
  return `$${cost.toFixed(decimals)}`;
}

export function secondsText(seconds: number): string {
  return seconds < 1 ? `${Math.round(seconds * 1000)} ms` : `${seconds.toFixed(2)} s`;
}

export type TimeZoneChoice = 'local' | 'utc';

/** A time to read: "2026-11-24 21:05:03 UTC", or the browser's local form. */
export function timeText(iso: string, zone: TimeZoneChoice): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return zone === 'utc' ? `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC` : date.toLocaleString();
}
