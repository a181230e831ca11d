/**
 * A time zone's UTC offsets over a time range, as segments of constant offset, found with Intl alone:
 * the offset at an instant, and the instants where it changes (DST), between two times.
 */
import { AppError } from '../errors.js';

const HOUR_MS = 3_600_000;
/** Offsets change at most a few times a year; sampling this often finds every change of a real zone. */
const SAMPLE_MS = 24 * HOUR_MS;

/** A stretch of time, [start, end), over which the zone's offset (local − UTC, in ms) is constant. */
export interface OffsetSegment {
  start: number;
  end: number;
  offset: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The formatter of an IANA zone name; an unknown name is a 400 naming `param`. */
export function zoneFormatter(tz: string, param = 'tz'): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (f) return f;
  try {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  } catch {
    throw new AppError(
      400,
      'invalid_value',
      `${param}: unknown time zone '${tz}'; use an IANA name such as Europe/Paris.`,
      param,
    );
  }
  if (formatters.size > 1000) formatters.clear();
  formatters.set(tz, f);
  return f;
}

/** Whether `tz` names a time zone this runtime knows. */
export function isTimeZone(tz: string): boolean {
  try {
    zoneFormatter(tz);
    return true;
  } catch {
    return false;
  }
}

/** local − UTC at `t`, in ms (whole seconds: no zone has had sub-second offsets). */
export function offsetAt(f: Intl.DateTimeFormat, t: number): number {
  const parts: Record<string, number> = {};
  for (const p of f.formatToParts(new Date(t))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  const local = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second);
  return local - Math.floor(t / 1000) * 1000;
}

/** The first instant after `lo` (where the offset is `offLo`) at which the offset differs, lo < x ≤ hi. */
function changeBetween(f: Intl.DateTimeFormat, lo: number, hi: number, offLo: number): number {
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (offsetAt(f, mid) === offLo) lo = mid;
    else hi = mid;
  }
  return hi;
}

/** The zone's offset segments covering [start, end]; the first starts at −∞ and the last ends at +∞. */
export function offsetSegments(tz: string, start: number, end: number): OffsetSegment[] {
  const f = zoneFormatter(tz);
  const segments: OffsetSegment[] = [];
  let segStart = -Infinity;
  let offset = offsetAt(f, start);
  let t = start;
  while (t < end) {
    const next = Math.min(end, t + SAMPLE_MS);
    const off = offsetAt(f, next);
    if (off !== offset) {
      const change = changeBetween(f, t, next, offset);
      segments.push({ start: segStart, end: change, offset });
      segStart = change;
      offset = offsetAt(f, change);
      t = change;
      continue;
    }
    t = next;
  }
  segments.push({ start: segStart, end: Infinity, offset });
  return segments;
}
