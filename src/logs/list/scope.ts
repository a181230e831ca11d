/** Which logs a list call sees before any filter, as a type and as SQL: the list, its filter options and plan share it. */
import { type ExpressionBuilder, sql } from 'kysely';
import type { Database } from '../../db/schema.js';

/** Which logs a list call sees before any filter (docs/api.md "Listing logs": all_envs, is_test). */
export interface LogScope {
  organizationId: string;
  start: number;
  end: number;
  /** true: test logs only; false: production logs only; null: both. */
  isTest: boolean | null;
}

/**
 * The scope as SQL. With `seekByTime` false the time bounds are written `+logs.timestamp`, which no
 * index serves: a page sorted by id, cost or latency over many matches is then read in order from that
 * column's index instead of sorting every match, on SQLite and PostgreSQL alike.
 */
export function scopeWhere(eb: ExpressionBuilder<Database, 'logs'>, scope: LogScope, seekByTime = true) {
  const time = seekByTime ? sql.ref('logs.timestamp') : sql`+${sql.ref('logs.timestamp')}`;
  const conditions = [
    eb('logs.organization_id', '=', scope.organizationId),
    eb(time, '>=', scope.start),
    eb(time, '<=', scope.end),
  ];
  if (scope.isTest !== null) conditions.push(eb('logs.is_test', '=', scope.isTest ? 1 : 0));
  return eb.and(conditions);
}

/** The scope cut into `count` contiguous time slices of equal length (fewer when the range is shorter). */
export function timeSlices(scope: LogScope, count: number): LogScope[] {
  const length = scope.end - scope.start + 1;
  const parts = Math.max(1, Math.min(count, length));
  return Array.from({ length: parts }, (_, i) => ({
    ...scope,
    start: scope.start + Math.floor((i * length) / parts),
    end: scope.start + Math.floor(((i + 1) * length) / parts) - 1,
  }));
}
