/**
 * Listing request logs (CONTRACT §7): tenant, environment scope and time range are always applied
 * here; the caller's filter tree and sort come in already parsed and checked.
 */
import { type ExpressionBuilder, type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type { DialectName } from '../db/connect.js';
import type { Database } from '../db/schema.js';
import { compileFilter } from '../filters/compile.js';
import { LOG_FIELDS } from '../filters/registry.js';
import type { FilterNode } from '../filters/types.js';
import type { Paging } from '../http/query-params.js';
import { type LogItem, presentLog } from './present.js';
import { scoresOfLogs } from './repository.js';
import type { LogSort } from './sort.js';

/** Which logs a list call sees before any filter (CONTRACT §7 "Environments"). */
export interface LogScope {
  organizationId: string;
  start: number;
  end: number;
  /** true: test logs only; false: production logs only; null: both. */
  isTest: boolean | null;
}

export interface ListRequest {
  scope: LogScope;
  filter: FilterNode | null;
  sort: LogSort;
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
  return eb.and(conditions);
}

export function filteredLogs(
  db: Kysely<Database>,
  dialect: DialectName,
  scope: LogScope,
  filter: FilterNode | null,
): LogsQuery {
  let query: LogsQuery = db.selectFrom('logs').where((eb) => scopeWhere(eb, scope));
  if (filter) {
    const condition = compileFilter(
      {
        dialect,
        registry: LOG_FIELDS,
        organizationId: scope.organizationId,
        metadataTable: 'log_metadata',
        scoresTable: 'scores',
      },
      filter,
    );
    query = query.where(condition);
  }
  return query;
}

function ordered(query: LogsQuery, sort: LogSort) {
  const dir = sort.descending ? sql`desc` : sql`asc`;
  if (sort.kind === 'score') {
    return query
      .leftJoin(
        (eb) =>
          eb
            .selectFrom('scores')
            .select(['scores.log_id', 'scores.score_value'])
            .where('scores.evaluator_id', '=', sort.evaluatorId)
            .as('sort_score'),
        (join) => join.onRef('sort_score.log_id', '=', 'logs.id'),
      )
      .orderBy(sql`sort_score.score_value ${dir} nulls last`)
      .orderBy(sql`logs.id ${dir}`);
  }
  if (sort.column === 'id') return query.orderBy(sql`logs.id ${dir}`);
  return query.orderBy(sql`${sql.ref(`logs.${sort.column}`)} ${dir} nulls last`).orderBy(sql`logs.id ${dir}`);
}

export async function listLogs(
  db: Kysely<Database>,
  dialect: DialectName,
  request: ListRequest,
): Promise<{ count: number; items: LogItem[] }> {
  const { scope, paging, filter, sort } = request;
  const base = filteredLogs(db, dialect, scope, filter);
  const countRow = await base.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
  const rows = await ordered(base, sort)
    .innerJoin('organizations', 'organizations.id', 'logs.organization_id')
    .selectAll('logs')
    .select('organizations.name as organization_name')
    .limit(paging.pageSize)
    .offset((paging.page - 1) * paging.pageSize)
    .execute();
  const scores = await scoresOfLogs(
    db,
    rows.map((r) => r.id),
  );
  return { count: Number(countRow.count), items: rows.map((r) => presentLog(r, scores.get(r.id) ?? {})) };
}
