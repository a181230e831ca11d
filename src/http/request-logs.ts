/**
 * The logging API and the request-log list (CONTRACT §5, §7):
 *   POST /api/request-logs/create/, POST /api/request-logs/batch/,
 *   GET|POST /api/request-logs/list/, GET /api/request-logs/, POST /api/request-logs/ (list or create),
 *   GET|PATCH|DELETE /api/request-logs/{unique_id}/.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppDeps } from '../app.js';
import { AppError } from '../errors.js';
import { listLogs, type LogScope } from '../logs/list.js';
import { getLogItem, ingestBatch, ingestOne, patchLog, removeLog } from '../logs/service.js';
import { pageOf } from './paging.js';
import { parseBoolean, parsePaging, parseTimeRange, type Query, single } from './query-params.js';

/** SPEC: the request-log list pages by 100 unless told otherwise. */
export const REQUEST_LOG_PAGE_SIZE = 100;

type UniqueIdParams = { Params: { unique_id: string } };

function parseScope(query: Query, organizationId: string): LogScope {
  const { start, end } = parseTimeRange(query);
  const isTest = parseBoolean(query, 'is_test');
  const allEnvs = parseBoolean(query, 'all_envs');
  return {
    organizationId,
    start,
    end,
    isTest: isTest !== undefined ? isTest : allEnvs ? null : false,
    environment: single(query, 'environment') || null,
  };
}

/** A POST body whose only key is `filters` (or an empty body) asks for a list (CONTRACT §5). */
function isListBody(body: unknown): boolean {
  if (body === undefined || body === null) return true;
  if (typeof body !== 'object' || Array.isArray(body)) return false;
  return Object.keys(body).every((k) => k === 'filters');
}

export function registerRequestLogRoutes(app: FastifyInstance, deps: AppDeps): void {
  const list = async (request: FastifyRequest, reply: FastifyReply) => {
    const query = request.query as Query;
    const body = request.body as { filters?: unknown } | undefined;
    if (body?.filters && typeof body.filters === 'object' && Object.keys(body.filters).length > 0) {
      throw new AppError(400, 'filters_unsupported', 'Body filters are not supported yet.', 'filters');
    }
    const paging = parsePaging(query, REQUEST_LOG_PAGE_SIZE);
    const scope = parseScope(query, request.auth.organizationId);
    const { count, items } = await listLogs(deps.db.db, { scope, paging });
    return reply.send(pageOf(request, deps.config.publicUrl, paging, count, items));
  };
  const create = async (request: FastifyRequest, reply: FastifyReply) => {
    const uniqueId = ingestOne(deps, request.auth, request.body);
    return reply.status(201).send({ unique_id: uniqueId, message: 'log successful' });
  };

  app.get('/api/request-logs/list/', list);
  app.post('/api/request-logs/list/', list);
  app.get('/api/request-logs/', list);
  app.post('/api/request-logs/', (request, reply) =>
    isListBody(request.body) ? list(request, reply) : create(request, reply),
  );
  app.post('/api/request-logs/create/', create);
  app.post('/api/request-logs/batch/', async (request, reply) => {
    const uniqueIds = ingestBatch(deps, request.auth, request.body);
    return reply.status(201).send({ ingested_count: uniqueIds.length, unique_ids: uniqueIds });
  });

  app.get<UniqueIdParams>('/api/request-logs/:unique_id/', (request) =>
    getLogItem(deps, request.auth, request.params.unique_id),
  );
  app.patch<UniqueIdParams>('/api/request-logs/:unique_id/', (request) =>
    patchLog(deps, request.auth, request.params.unique_id, request.body),
  );
  app.delete<UniqueIdParams>('/api/request-logs/:unique_id/', async (request, reply) => {
    await removeLog(deps, request.auth, request.params.unique_id);
    return reply.status(204).send();
  });
}
