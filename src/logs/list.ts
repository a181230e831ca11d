/**
 * Listing request logs (CONTRACT §7): tenant, environment scope and time range are always applied
 * here; the caller's filters and sort come in already parsed.
 */
import type { ExpressionBuilder, Kysely, SelectQueryBuilder } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Paging } from '../http/query-params.js';
import { type LogItem, presentLog } from './present.js';
import { scoresOfLogs } from './repository.js';

/** Which logs a list call sees before any filter (CONTRACT §7 "Environments"). */
export interface LogScope {
  organizationId: string;
  start: number;
  end: number;
  /** true: test logs only; false: production logs only; null: both. */
  isTest: boolean | null;
  environment: string | null;
}

export interface ListRequest {
  scope: LogScope;
  paging: Paging;
}

type LogsQuery = SelectQueryBuilder<Database, 'logs', object>;

export function scopeWhere(eb: ExpressionBuilder<Database, 'logs'>, scope: LogScope) {
  const conditions = [
    eb('logs.organization_id', '=', scope.organizationId),
    eb('logs.timestamp', '>=', scope.start),
    eb('logs.timestamp', '<=', scope.end),
  ];
  if (scope.isTest !== null) conditions.push(eb('logs.is_test', '=', scope.isTest ? 1 : 0));
  if (scope.environment !== null) conditions.push(eb('logs.environment', '=', scope.environment));
  return eb.and(conditions);
}

function scoped(db: Kysely<Database>, scope: LogScope): LogsQuery {
  return db.selectFrom('logs').where((eb) => scopeWhere(eb, scope));
}

export async function listLogs(
  db: Kysely<Database>,
  request: ListRequest,
): Promise<{ count: number; items: LogItem[] }> {
  const { scope, paging } = request;
  const countRow = await scoped(db, scope)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  const rows = await scoped(db, scope)
    .innerJoin('organizations', 'organizations.id', 'logs.organization_id')
    .selectAll('logs')
    .select('organizations.name as organization_name')
    .orderBy('logs.id', 'desc')
    .limit(paging.pageSize)
    .offset((paging.page - 1) * paging.pageSize)
    .execute();
  const scores = await scoresOfLogs(
    db,
    rows.map((r) => r.id),
  );
  return { count: Number(countRow.count), items: rows.map((r) => presentLog(r, scores.get(r.id) ?? {})) };
}
