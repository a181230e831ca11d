/**
 * Evaluators and log scores (docs/api.md "Evaluators and scores"):
 *   POST|GET /api/evaluators/, GET|PATCH|DELETE /api/evaluators/{id}/,
 *   POST|GET /api/logs/{unique_id}/scores/ (alias /api/request-logs/{unique_id}/scores/),
 *   DELETE .../scores/{id}/.
 */
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../app.js';
import type { ScoresTable } from '../db/schema.js';
import { notFound } from '../errors.js';
import {
  deleteEvaluator,
  deleteScore,
  listEvaluators,
  requireEvaluator,
  scoresOfLog,
  toEvaluatorView,
} from '../evaluators/repository.js';
import { createEvaluator, createScore, patchEvaluator } from '../evaluators/service.js';
import { loadLog } from '../logs/service.js';
import { pageOf } from './paging.js';
import { parsePaging, type Query } from './query-params.js';

/** Evaluator lists page by 50 (docs/api.md "Evaluators and scores"). */
const EVALUATOR_PAGE_SIZE = 50;

type IdParams = { Params: { id: string } };
type LogParams = { Params: { unique_id: string } };
type ScoreParams = { Params: { unique_id: string; score_id: string } };

export function scoreView(row: ScoresTable, evaluatorSlug: string, logUniqueId: string) {
  return {
    id: row.id,
    evaluator_id: row.evaluator_id,
    evaluator_slug: evaluatorSlug,
    log_id: logUniqueId,
    numerical_value: row.numerical_value,
    boolean_value: row.boolean_value === null ? null : row.boolean_value === 1,
    score_value: row.score_value,
    created_at: new Date(row.created_at).toISOString(),
  };
}

export function registerEvaluatorRoutes(app: FastifyInstance, deps: AppDeps): void {
  const db = deps.db.db;

  app.post('/api/evaluators/', async (request, reply) => {
    return reply.status(201).send(await createEvaluator(db, request.auth.organizationId, request.body));
  });
  app.get('/api/evaluators/', async (request) => {
    const paging = parsePaging(request.query as Query, EVALUATOR_PAGE_SIZE);
    const { count, rows } = await listEvaluators(
      db,
      request.auth.organizationId,
      paging.pageSize,
      (paging.page - 1) * paging.pageSize,
    );
    return pageOf(request, deps.config.publicUrl, paging, count, rows.map(toEvaluatorView));
  });
  app.get<IdParams>('/api/evaluators/:id/', async (request) =>
    toEvaluatorView(await requireEvaluator(db, request.auth.organizationId, request.params.id)),
  );
  app.patch<IdParams>('/api/evaluators/:id/', async (request) => {
    const row = await requireEvaluator(db, request.auth.organizationId, request.params.id);
    return patchEvaluator(db, row, request.body);
  });
  app.delete<IdParams>('/api/evaluators/:id/', async (request, reply) => {
    const row = await requireEvaluator(db, request.auth.organizationId, request.params.id);
    await deleteEvaluator(db, row.id);
    return reply.status(204).send();
  });

  for (const base of ['/api/logs/:unique_id/scores/', '/api/request-logs/:unique_id/scores/']) {
    app.post<LogParams>(base, async (request, reply) => {
      const log = await loadLog(deps, request.auth, request.params.unique_id);
      const { row, evaluatorSlug } = await createScore(
        db,
        { organizationId: request.auth.organizationId, logId: log.id },
        request.body,
      );
      return reply.status(201).send(scoreView(row, evaluatorSlug, log.unique_id));
    });
    app.get<LogParams>(base, async (request) => {
      const log = await loadLog(deps, request.auth, request.params.unique_id);
      const rows = await scoresOfLog(db, log.id);
      return { results: rows.map((r) => scoreView(r, r.evaluator_slug, log.unique_id)) };
    });
    app.delete<ScoreParams>(`${base}:score_id/`, async (request, reply) => {
      const log = await loadLog(deps, request.auth, request.params.unique_id);
      if (!(await deleteScore(db, log.id, request.params.score_id))) {
        throw notFound(`No score with id '${request.params.score_id}' on this log.`);
      }
      return reply.status(204).send();
    });
  }
}
