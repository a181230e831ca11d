/**
 * The time buckets of a summary. Buckets shorter than a day are spans of time: the first starts at the
 * zone's own clock mark before the range (a local hour, a local quarter hour…) and each next one a
 * bucket's length later, so every hour bucket holds one hour even when clocks change (the repeated hour
 * when they go back is two buckets).
 *
 * Day and week buckets are spans of the zone's local clock time: a log falls in the bucket holding its
 * local time (its UTC time plus the zone's offset at that instant), so they start at local midnight
 * whatever the DST offset. Each is answered by the first instant its local span begins at; a local
 * start that never happened is answered as the instant the clocks jumped, and a bucket wholly inside
 * the gap is left out.
 */
import { AppError } from '../../errors.js';
import { type OffsetSegment, offsetSegments } from '../../util/time-zone.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;
/** Local day 4 after the epoch (1970-01-05) was a Monday: weeks start on Monday. */
const WEEK_ORIGIN = 4 * DAY;

export const BUCKET_NAMES = ['auto', '1m', '5m', '15m', '1h', '6h', '1d', '1w'] as const;
export type BucketName = (typeof BUCKET_NAMES)[number];

/** `auto` answers between these many buckets (when the range allows it: one minute at least). */
export const AUTO_MIN_BUCKETS = 30;
export const AUTO_MAX_BUCKETS = 120;
/** A chosen bucket over a range that would make more than this many is refused. */
export const MAX_BUCKETS = 1500;

export interface BucketSize {
  /** As answered: 1m, 2h, 1d, 3w … */
  name: string;
  ms: number;
  /** Bucket starts are origin + k·ms in local clock ms since the epoch. */
  origin: number;
}

const size = (n: number, unit: 'm' | 'h' | 'd' | 'w'): BucketSize => {
  const ms = n * { m: MINUTE, h: HOUR, d: DAY, w: WEEK }[unit];
  return { name: `${n}${unit}`, ms, origin: unit === 'w' ? WEEK_ORIGIN : 0 };
};

/** The sizes `auto` chooses from, small to large; each divides a day or is whole weeks. */
const AUTO_LADDER: BucketSize[] = [
  size(1, 'm'),
  size(2, 'm'),
  size(5, 'm'),
  size(10, 'm'),
  size(15, 'm'),
  size(30, 'm'),
  size(1, 'h'),
  size(2, 'h'),
  size(3, 'h'),
  size(6, 'h'),
  size(12, 'h'),
  size(1, 'd'),
  size(2, 'd'),
  size(1, 'w'),
];

export function bucketSizeOf(name: Exclude<BucketName, 'auto'>): BucketSize {
  return size(Number(name.slice(0, -1)), name.at(-1) as 'm' | 'h' | 'd' | 'w');
}

/**
 * The size `auto` picks for a range: the smallest of the ladder that makes at most AUTO_MAX_BUCKETS,
 * which makes at least AUTO_MIN_BUCKETS for any range of 30 minutes or more; past the ladder, whole
 * weeks.
 */
export function autoBucketSize(start: number, end: number): BucketSize {
  const span = end - start + 1;
  for (const s of AUTO_LADDER) if (Math.ceil(span / s.ms) + 1 <= AUTO_MAX_BUCKETS) return s;
  return size(Math.ceil(span / WEEK / (AUTO_MAX_BUCKETS - 2)), 'w');
}

/** The buckets of a range: their local starts, the instants they begin, and the zone's segments. */
export interface BucketPlan {
  size: BucketSize;
  segments: OffsetSegment[];
  /** The local start of the first bucket; a log's bucket number is floor((local − first) / size). */
  firstLocal: number;
  /**
   * For buckets shorter than a day, the instant the first begins: a log's bucket number is then
   * floor((timestamp − firstInstant) / size), the zone's offset playing no part past the first.
   */
  firstInstant: number | null;
  /** The instant each answered bucket begins, in order. */
  starts: number[];
  /** Bucket number → index in `starts`. */
  indexOf: Map<number, number>;
}

const alignDown = (local: number, s: BucketSize) => Math.floor((local - s.origin) / s.ms) * s.ms + s.origin;

/** The first instant whose local time is `local` or later (so a local time in a DST gap gives the jump). */
function instantOf(segments: OffsetSegment[], local: number): number {
  for (const seg of segments) {
    const t = local - seg.offset;
    if (t < seg.end && t >= seg.start) return t;
    // The clocks jumped over `local` at this segment's end.
    if (t < seg.start) return seg.start;
  }
  return local - segments[segments.length - 1].offset;
}

export function planBuckets(start: number, end: number, tz: string, s: BucketSize): BucketPlan {
  const segments = offsetSegments(tz, start, end);
  if (s.ms < DAY) return planSpans(start, end, segments, s);
  // The local times of the range: within each segment, the clock runs forward.
  let minLocal = Infinity;
  let maxLocal = -Infinity;
  for (const seg of segments) {
    const from = Math.max(seg.start, start);
    const to = Math.min(seg.end - 1, end);
    if (from > to) continue;
    minLocal = Math.min(minLocal, from + seg.offset);
    maxLocal = Math.max(maxLocal, to + seg.offset);
  }
  const firstLocal = alignDown(minLocal, s);
  const count = Math.floor((maxLocal - firstLocal) / s.ms) + 1;
  checkCount(count, s);
  const starts: number[] = [];
  const indexOf = new Map<number, number>();
  for (let k = 0; k < count; k++) {
    const instant = instantOf(segments, firstLocal + k * s.ms);
    const next = instantOf(segments, firstLocal + (k + 1) * s.ms);
    // A bucket wholly inside a DST gap holds no instant: left out.
    if (next <= instant) continue;
    indexOf.set(k, starts.length);
    starts.push(instant);
  }
  return { size: s, segments, firstLocal, firstInstant: null, starts, indexOf };
}

function checkCount(count: number, s: BucketSize): void {
  if (count <= MAX_BUCKETS) return;
  throw new AppError(
    400,
    'invalid_value',
    `bucket: '${s.name}' makes ${count} buckets over this time range, more than ${MAX_BUCKETS}; choose a larger bucket or "auto".`,
    'bucket',
  );
}

/** Buckets shorter than a day: equal spans of time from the zone's clock mark at or before `start`. */
function planSpans(start: number, end: number, segments: OffsetSegment[], s: BucketSize): BucketPlan {
  const offset = (segments.find((seg) => start >= seg.start && start < seg.end) ?? segments[0]).offset;
  const firstLocal = alignDown(start + offset, s);
  const firstInstant = firstLocal - offset;
  const count = Math.floor((end - firstInstant) / s.ms) + 1;
  checkCount(count, s);
  const starts: number[] = [];
  const indexOf = new Map<number, number>();
  for (let k = 0; k < count; k++) {
    indexOf.set(k, k);
    starts.push(firstInstant + k * s.ms);
  }
  return { size: s, segments, firstLocal, firstInstant, starts, indexOf };
}
