/**
 * SQLite: a window's sessions summed in time slices read side by side, one per reader thread, and merged
 * here — the sums of a long window were most of the first page's time (a week of a million logs:
 * 417 ms on one thread, the analytics target 300). The merge gives what the one GROUP BY gives: the
 * same sums, the same order (names by code point, which is their UTF-8 bytes' order, as SQLite compares
 * them), the same count. A window with too many sessions to hold here
 * (sessionTuning.mostGroups in a slice) is left to the one GROUP BY, which pages without holding them.
 */
import type { SelectQueryBuilder } from 'kysely';
import type { Database } from '../../db/schema.js';
import { SQLITE_READERS } from '../../db/sqlite-read-dialect.js';
import { timeSlices, type LogScope } from '../list/scope.js';
import { type SessionSums, sessionSumColumns, sumsOf } from './session-sums.js';

/** How sessions are ordered: by their last call or by what they cost, ties by the other, then by name. */
export interface SessionSort {
  by: 'last_seen' | 'cost';
  descending: boolean;
}

/** Settings (so that tests can take the sliced way with few logs): windows this long or longer are sliced. */
export const sessionTuning = { slicedFromMs: 60 * 60 * 1000, slices: SQLITE_READERS, mostGroups: 100_000 };

/** The window's session logs of one slice, grouped by session (built by the caller: scope and filter). */
type GroupsOf = (slice: LogScope) => SelectQueryBuilder<Database, 'logs', object>;

/**
 * Every session of the window summed over its slices, sorted as `sort` asks; null when a slice holds more
 * sessions than sessionTuning.mostGroups (the caller then pages with one GROUP BY).
 */
export async function slicedSessions(
  scope: LogScope,
  groupsOf: GroupsOf,
  sort: SessionSort,
): Promise<SessionSums[] | null> {
  const slices = timeSlices(scope, sessionTuning.slices);
  const parts = await Promise.all(
    slices.map((slice) =>
      groupsOf(slice)
        .select(sessionSumColumns())
        .limit(sessionTuning.mostGroups + 1)
        .execute(),
    ),
  );
  if (parts.some((rows) => rows.length > sessionTuning.mostGroups)) return null;
  const merged = new Map<string, SessionSums>();
  for (const rows of parts) {
    for (const row of rows) {
      const r = sumsOf(row);
      const had = merged.get(r.thread_identifier);
      if (!had) {
        merged.set(r.thread_identifier, r);
        continue;
      }
      had.first_seen = Math.min(had.first_seen, r.first_seen);
      had.last_seen = Math.max(had.last_seen, r.last_seen);
      had.calls += r.calls;
      had.errors += r.errors;
      had.cost += r.cost;
      had.prompt_tokens += r.prompt_tokens;
      had.completion_tokens += r.completion_tokens;
    }
  }
  return [...merged.values()].sort(sessionOrder(sort));
}

/** Two names in code-point order (UTF-8's, SQLite's BINARY collation), not JavaScript's UTF-16 order. */
export function byCodePoint(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // A surrogate (a character past U+FFFF) comes after every character of the BMP above the surrogates.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys && Math.max(x, y) >= 0xe000) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

function sessionOrder(sort: SessionSort): (a: SessionSums, b: SessionSums) => number {
  const sign = sort.descending ? -1 : 1;
  return (a, b) =>
    sign *
    ((sort.by === 'cost' ? a.cost - b.cost : 0) ||
      a.last_seen - b.last_seen ||
      byCodePoint(a.thread_identifier, b.thread_identifier));
}
