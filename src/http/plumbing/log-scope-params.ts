/**
 * The query parameters every request-log read shares — the list, its facet counts, the sessions and the
 * export: the time range, the environment scope, and a list of item fields — and the scope they name.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import { LOG_FIELDS } from '../../filters/registry.js';
import type { FilterNode } from '../../filters/types.js';
import type { LogScope } from '../../logs/list/scope.js';
import { listFilter } from './list-filters.js';
import { LOG_ITEM_FIELDS } from '../../logs/present.js';
import { parseBoolean, parseTimeParam, type Query, single, timeRange } from './query-params.js';
import { queryParam } from './schemas.js';

const time = (name: string, what: string) =>
  queryParam(name, (q) => parseTimeParam(q, name), `${what}: ISO 8601, no offset means UTC`);

export const flagParam = (name: string, description: string) =>
  queryParam(name, (q) => parseBoolean(q, name), description);

/** What the OpenAPI document says of the parameters a log selection reads as filters. */
export const QUICK_FILTERS =
  'Every query parameter besides those below is a URL quick filter: F=V, or F[value]=V&F[operator]=OP&' +
  'F[connector]=and|or, folded left to right (docs/api.md "URL quick filters"); a name that is not a field ' +
  'reads as metadata__<name>. A body filter on a field the URL filters is dropped.';

/** start_time, end_time, is_test, all_envs (docs/api.md "Listing logs"). */
export const LOG_SCOPE_QUERY = {
  start_time: time('start_time', 'The earliest log time (default: an hour before end_time)'),
  end_time: time('end_time', 'The latest log time, inclusive (default: now)'),
  is_test: flagParam('is_test', 'true: only test-key logs; false (default): only production logs'),
  all_envs: flagParam('all_envs', 'true: logs of every environment (is_test, when given, wins)'),
};

interface ScopeQuery {
  start_time?: number;
  end_time?: number;
  is_test?: boolean;
  all_envs?: boolean;
}

/** The logs a read sees before any filter: the caller's organization, the time range, the environments. */
export function logScopeOf(request: FastifyRequest, query: ScopeQuery): LogScope {
  return organizationScopeOf(request.auth.organizationId, query);
}

/**
 * The logs a read of the list's kind selects — the list, its facet counts, the sessions: the scope its
 * query names and its filters (URL quick filters, and a POST's body filters).
 */
export function logSelectionOf(
  request: FastifyRequest,
  reply: FastifyReply,
  query: ScopeQuery,
): { scope: LogScope; filter: FilterNode | null } {
  return { scope: logScopeOf(request, query), filter: listFilter(request, reply, LOG_FIELDS) };
}

/** The same for an organization known otherwise than by the request's key (an export token). */
export function organizationScopeOf(organizationId: string, query: ScopeQuery): LogScope {
  const { start, end } = timeRange(query.start_time, query.end_time);
  const isTest = query.is_test !== undefined ? query.is_test : query.all_envs ? null : false;
  return { organizationId, start, end, isTest };
}

/**
 * A comma-separated list of log item fields in parameter `name`; null when absent; an unknown field is a
 * 400. `also` admits other names (an export's `metadata__<key>` columns).
 */
export const itemFieldsParser =
  (name: string, also: (field: string) => boolean = () => false) =>
  (query: Query): string[] | null => {
    const raw = single(query, name);
    if (raw === undefined || raw.trim() === '') return null;
    const fields = raw
      .split(',')
      .map((f) => f.trim())
      .filter(Boolean);
    for (const f of fields) {
      if (!(LOG_ITEM_FIELDS as readonly string[]).includes(f) && !also(f)) {
        throw new AppError(400, 'invalid_parameter', `${name}: unknown field '${f}'.`, name);
      }
    }
    return fields;
  };
