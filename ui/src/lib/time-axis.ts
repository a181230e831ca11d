/**
 * The time axis of a chart: which steps its ticks may take and how each tick reads, decided by the
 * window's length. Pure (uPlot's axis options call it; components/chart.tsx). A window of a few days or
 * more ticks whole days and reads dates ("Nov 22"); a shorter one reads times of day ("14:00"), with the
 * date at the tick where a day begins, so that a 24-hour or 2-day window still says which day is which.
 * uPlot's own labels put that date on a second line, which an axis sized for one line cut off.
 */
const MINUTE = 60;
const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
/** uPlot places ticks of 30 days or more at month starts, and of 365 days at year starts. */
const MONTH = 30 * DAY;
const YEAR = 365 * DAY;

/** Tick steps in seconds, as uPlot's own (its month and year steps are these values). */
const STEPS = [
  MINUTE,
  5 * MINUTE,
  10 * MINUTE,
  15 * MINUTE,
  30 * MINUTE,
  HOUR,
  2 * HOUR,
  3 * HOUR,
  4 * HOUR,
  6 * HOUR,
  8 * HOUR,
  12 * HOUR,
  DAY,
  2 * DAY,
  3 * DAY,
  7 * DAY,
  14 * DAY,
  MONTH,
  2 * MONTH,
  3 * MONTH,
  6 * MONTH,
  YEAR,
  2 * YEAR,
  5 * YEAR,
  10 * YEAR,
];

/** From this length on a window is read in days: its ticks are whole days (or weeks, months). */
export const MULTI_DAY = 3 * DAY;

/** The tick steps a window of `spanSeconds` may take (uPlot picks the smallest that leaves room). */
export const timeSteps = (spanSeconds: number): number[] =>
  spanSeconds >= MULTI_DAY ? STEPS.filter((s) => s >= DAY) : STEPS;

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const two = (n: number) => String(n).padStart(2, '0');

/** What a tick's date gives (a Date read in the chart's zone: uPlot's tzDate). */
export type TickDate = Pick<Date, 'getFullYear' | 'getMonth' | 'getDate' | 'getHours' | 'getMinutes'>;

/** A tick's label, for ticks `step` seconds apart. */
export function tickLabel(date: TickDate, step: number): string {
  if (step >= YEAR) return String(date.getFullYear());
  if (step >= MONTH) return date.getMonth() === 0 ? String(date.getFullYear()) : MONTHS[date.getMonth()];
  const day = `${MONTHS[date.getMonth()]} ${date.getDate()}`;
  if (step >= DAY || (date.getHours() === 0 && date.getMinutes() === 0)) return day;
  return `${two(date.getHours())}:${two(date.getMinutes())}`;
}
