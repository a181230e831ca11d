/**
 * How filter_options covers a time range: whole days from the daily facet counts, whole hours at the
 * edges from the hourly ones, and the partial hours at the very edges from the logs themselves. A
 * 7-day range thus reads ~6 daily and ~24 hourly buckets plus at most two hours of logs.
 */
import { DAY_MS, HOUR_MS } from '../facets.js';

export interface FacetPlan {
  /** Bucket starts of daily buckets to sum: [from, to). */
  days: [number, number] | null;
  /** Bucket starts of hourly buckets to sum: [from, to) each. */
  hours: [number, number][];
  /** Timestamps counted from the logs: [from, to] each, inclusive. */
  raw: [number, number][];
}

const ceilTo = (t: number, grain: number) => Math.ceil(t / grain) * grain;
const floorTo = (t: number, grain: number) => Math.floor(t / grain) * grain;

/** Plans the inclusive range [start, end] (epoch ms). */
export function planFacetRanges(start: number, end: number): FacetPlan {
  const hStart = ceilTo(start, HOUR_MS);
  const hEnd = floorTo(end + 1, HOUR_MS);
  if (hStart >= hEnd) return { days: null, hours: [], raw: [[start, end]] };
  const raw: [number, number][] = [];
  if (start < hStart) raw.push([start, hStart - 1]);
  if (hEnd <= end) raw.push([hEnd, end]);
  const dStart = ceilTo(hStart, DAY_MS);
  const dEnd = floorTo(hEnd, DAY_MS);
  if (dStart >= dEnd) return { days: null, hours: [[hStart, hEnd]], raw };
  const hours: [number, number][] = [];
  if (hStart < dStart) hours.push([hStart, dStart]);
  if (dEnd < hEnd) hours.push([dEnd, hEnd]);
  return { days: [dStart, dEnd], hours, raw };
}
