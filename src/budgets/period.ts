/**
 * A budget's periods (docs/api.md "Budgets"): days begin at local midnight in the budget's time zone,
 * weeks on Monday, months on the 1st; a "total" budget has one period, from the beginning of time.
 */
import { offsetAt, zoneFormatter } from '../util/time-zone.js';

export type Period = 'day' | 'week' | 'month' | 'total';

export interface PeriodBounds {
  /** Epoch ms; 0 for a total budget. */
  start: number;
  /** Epoch ms; null for a total budget (it never ends). */
  end: number | null;
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
  const f = zoneFormatter(tz);
  const local = localDate(now, f);
  let { year, month, day } = local;
  if (period === 'week') day -= (local.weekday + 6) % 7;
  if (period === 'month') day = 1;
  const start = localMidnight(year, month, day, f);
  if (period === 'day') day += 1;
  else if (period === 'week') day += 7;
  else {
    month += 1;
    if (month > 12) {
      month = 1;
      year += 1;
    }
  }
  return { start, end: localMidnight(year, month, day, f) };
}

/** The wall-clock date and time in the zone of `f` at `at`; weekday 0 is Sunday. */
function localDate(at: number, f: Intl.DateTimeFormat) {
  const wall = new Date(at + offsetAt(f, at));
  return {
    year: wall.getUTCFullYear(),
    month: wall.getUTCMonth() + 1,
    day: wall.getUTCDate(),
    hour: wall.getUTCHours(),
    weekday: wall.getUTCDay(),
  };
}

/**
 * The instant local midnight begins `year-month-day` in the zone of `f` (the day and month may overflow:
 * Date.UTC carries them). Where the clocks jump over midnight, the first instant of that day.
 */
function localMidnight(year: number, month: number, day: number, f: Intl.DateTimeFormat): number {
  const wall = Date.UTC(year, month - 1, day);
  // The offset at the guess, then at the instant it gives: twice settles across a change of offset.
  let at = wall - offsetAt(f, wall);
  at = wall - offsetAt(f, at);
  // Midnight skipped (the clock went from 23:59 to 01:00): the day began at the jump, an hour later.
  if (localDate(at, f).hour === 23) at += 3_600_000;
  return at;
}
