/**
 * A budget's periods (docs/api.md "Budgets"): days begin at local midnight in the budget's time zone,
 * weeks on Monday, months on the 1st; a "total" budget has one period, from the beginning of time.
 */

export type Period = 'day' | 'week' | 'month' | 'total';

export interface PeriodBounds {
  /** Epoch ms; 0 for a total budget. */
  start: number;
  /** Epoch ms; null for a total budget (it never ends). */
  end: number | null;
}

export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

const TOTAL: PeriodBounds = Object.freeze({ start: 0, end: null });
/** The period last found for each kind and time zone: every call under a budget asks. */
const current = new Map<string, PeriodBounds>();

/** The period of a budget that holds `now` (epoch ms). */
export function periodAt(period: Period, tz: string, now: number): PeriodBounds {
  if (period === 'total') return TOTAL;
  const key = `${period} ${tz}`;
  const known = current.get(key);
  if (known !== undefined && known.start <= now && (known.end ?? Infinity) > now) return known;
  const bounds = Object.freeze(findPeriod(period, tz, now));
  if (current.size >= 1000) current.clear();
  current.set(key, bounds);
  return bounds;
}

function findPeriod(period: Exclude<Period, 'total'>, tz: string, now: number): PeriodBounds {
  const local = localDate(now, tz);
  let { year, month, day } = local;
  if (period === 'week') day -= (local.weekday + 6) % 7;
  if (period === 'month') day = 1;
  const start = localMidnight(year, month, day, tz);
  if (period === 'day') day += 1;
  else if (period === 'week') day += 7;
  else {
    month += 1;
    if (month > 12) {
      month = 1;
      year += 1;
    }
  }
  return { start, end: localMidnight(year, month, day, tz) };
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(tz: string): Intl.DateTimeFormat {
  let format = formatters.get(tz);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      weekday: 'short',
    });
    formatters.set(tz, format);
  }
  return format;
}

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

/** The wall-clock date and time in `tz` at `at`; weekday 0 is Sunday. */
function localDate(at: number, tz: string) {
  const parts: Record<string, string> = {};
  for (const part of formatter(tz).formatToParts(at)) parts[part.type] = part.value;
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
    weekday: WEEKDAYS.indexOf(parts.weekday ?? ''),
  };
}

/** How far `tz`'s wall clock is ahead of UTC at `at`, ms. */
function offsetAt(at: number, tz: string): number {
  const l = localDate(at, tz);
  const wall = Date.UTC(l.year, l.month - 1, l.day, l.hour, l.minute, l.second);
  return wall - Math.floor(at / 1000) * 1000;
}

/**
 * The instant local midnight begins `year-month-day` in `tz` (the day and month may overflow: Date.UTC
 * carries them). Where the clocks jump over midnight, the first instant of that day.
 */
function localMidnight(year: number, month: number, day: number, tz: string): number {
  const wall = Date.UTC(year, month - 1, day);
  // The offset at the guess, then at the instant it gives: twice settles across a change of offset.
  let at = wall - offsetAt(wall, tz);
  at = wall - offsetAt(at, tz);
  const local = localDate(at, tz);
  // Midnight skipped (the clock went from 23:59 to 01:00): the day began at the jump, an hour later.
  if (local.hour === 23) at += 3_600_000;
  return at;
}
