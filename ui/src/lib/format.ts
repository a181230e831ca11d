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

/**
 * Dollars with three significant digits at every size ($0.0158, $0.000123, $1.50, $12.3), never in
 * exponent notation, so that a column of costs reads in the order it sorts; whole dollars from $100 up.
 * An unknown price (null: the model's price is not known) is "—", never $0.
 */
export function costText(cost: number | null | undefined): string {
  if (cost === null || cost === undefined || !Number.isFinite(cost)) return UNKNOWN_COST;
  if (cost === 0) return '$0';
  const sign = cost < 0 ? '-' : '';
  // Rounded first (0.009999 is $0.0100): its exponent, exact as text, says how many decimals show.
  const [digits, exponent] = Math.abs(cost).toExponential(2).split('e');
  const rounded = Number(`${digits}e${exponent}`);
  if (rounded >= 100) return `${sign}$${Math.round(Math.abs(cost)).toLocaleString('en-US')}`;
  const decimals = Math.min(20, Math.max(0, 2 - Number(exponent)));
  return `${sign}$${rounded.toFixed(decimals)}`;
}

/** What a cost of unknown price shows, and what its title says. */
export const UNKNOWN_COST = '—';
export const UNKNOWN_COST_TITLE = 'Price unknown: no price is known for this model, so its cost could not be computed';

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
