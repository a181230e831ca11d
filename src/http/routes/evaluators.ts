/**
 * Evaluators and log scores (docs/api.md "Evaluators and scores"):
 *   POST|GET /api/evaluators/, GET|PATCH|DELETE /api/evaluators/{id}/,
 *   POST|GET /api/logs/{unique_id}/scores/ (alias /api/request-logs/{unique_id}/scores/),
 *   DELETE .../scores/{id}/.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppDeps } from '../../deps.js';
import type { ScoresTable } from '../../db/schema.js';
import { notFound } from '../../errors.js';
import {
  deleteEvaluator,
  deleteScore,
  listEvaluators,
  requireEvaluator,
  scoresOfLog,
  toEvaluatorView,
} from '../../evaluators/repository.js';
import {
  CreateEvaluator,
  CreateScore,
  createEvaluator,
  createScore,
  PatchEvaluator,
  patchEvaluator,
} from '../../evaluators/service.js';
import { loadLog } from '../../logs/service.js';
import { pageOfQuery } from '../plumbing/paging.js';
import { resourceSchemas } from '../plumbing/resource-schemas.js';
import { AUTHENTICATED_ERRORS, pagedListSchema, BODY_ERRORS, errors, Timestamp } from '../plumbing/schemas.js';

/** Evaluator lists page by 50 (docs/api.md "Evaluators and scores"). */
const EVALUATOR_PAGE_SIZE = 50;

const Evaluator = z.object({
  id: z.string().describe('UUID'),
  name: z.string(),
  evaluator_slug: z.string().describe('Unique in the organization; lower_snake_case of the name by default'),
  type: z.enum(['human', 'llm', 'code']),
  score_value_type: z.enum(['numerical', 'boolean']),
  description: z.string(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const Score = z.object({
  id: z.string().describe('UUID'),
  evaluator_id: z.string(),
  evaluator_slug: z.string(),
  log_id: z.string().describe("The log's unique_id"),
  numerical_value: z.number().nullable(),
  boolean_value: z.boolean().nullable(),
  score_value: z.number().describe('The value as a number: booleans as 0 or 1'),
  created_at: Timestamp,
});

const tags = ['Evaluators and scores'];
const evaluators = resourceSchemas(tags, z.object({ id: z.string().describe("The evaluator's id") }));
const LogParams = z.object({ unique_id: z.string().describe("The log's unique_id") });
const ScoreParams = LogParams.extend({ score_id: z.string().describe("The score's id") });

/**
 * The schema of a route that scores a log (a request log, or a dataset log) with an evaluator: 404 for
 * no such log or evaluator, 409 for a second score of the same evaluator.
 */
export function scoreLogSchema<P extends z.ZodType>(tags: string[], params: P, summary: string) {
  return { tags, summary, params, body: CreateScore, response: { 201: Score, ...errors(...BODY_ERRORS, 404, 409) } };
}

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

export function registerEvaluatorRoutes(scope: FastifyInstance, deps: AppDeps): void {
  const app = scope.withTypeProvider<ZodTypeProvider>();
  const db = deps.db.db;
  const org = (request: { auth: { organizationId: string } }) => request.auth.organizationId;

  app.post(
    '/api/evaluators/',
    { schema: evaluators.create('Create an evaluator', CreateEvaluator, Evaluator, 409) },
    async (request, reply) => reply.status(201).send(await createEvaluator(db, org(request), request.body)),
  );
  app.get(
    '/api/evaluators/',
    { schema: pagedListSchema(tags, 'List evaluators, oldest first', EVALUATOR_PAGE_SIZE, Evaluator) },
    (request) => pageOfQuery(request, deps.config.publicUrl, db, listEvaluators, toEvaluatorView),
  );
  app.get('/api/evaluators/:id/', { schema: evaluators.read('Read an evaluator', Evaluator) }, async (request) =>
    toEvaluatorView(await requireEvaluator(db, org(request), request.params.id)),
  );
  app.patch(
    '/api/evaluators/:id/',
    {
      schema: evaluators.change(
        'Change the name, slug, type or description of an evaluator (its score_value_type cannot change)',
        PatchEvaluator,
        Evaluator,
        409,
      ),
    },
    async (request) => patchEvaluator(db, await requireEvaluator(db, org(request), request.params.id), request.body),
  );
  app.delete(
    '/api/evaluators/:id/',
    { schema: evaluators.remove('Delete an evaluator and its scores') },
    async (request, reply) => {
      const row = await requireEvaluator(db, org(request), request.params.id);
      await deleteEvaluator(db, row.id);
      return reply.status(204).send(null);
    },
  );

  for (const base of ['/api/logs/:unique_id/scores/', '/api/request-logs/:unique_id/scores/']) {
    app.post(
      base,
      { schema: scoreLogSchema(tags, LogParams, 'Score a log with an evaluator (one score per evaluator and log)') },
      async (request, reply) => {
        const log = await loadLog(deps, request.auth, request.params.unique_id);
        const target = { table: 'scores' as const, organizationId: org(request), logId: log.id };
        const { row, evaluatorSlug } = await createScore(db, target, request.body);
        return reply.status(201).send(scoreView(row, evaluatorSlug, log.unique_id));
      },
    );
    app.get(
      base,
      {
        schema: {
          tags,
          summary: "A log's scores",
          params: LogParams,
          response: { 200: z.object({ results: z.array(Score) }), ...errors(...AUTHENTICATED_ERRORS, 404) },
        },
      },
      async (request) => {
        const log = await loadLog(deps, request.auth, request.params.unique_id);
        const rows = await scoresOfLog(db, log.id);
        return { results: rows.map((r) => scoreView(r, r.evaluator_slug, log.unique_id)) };
      },
    );
    app.delete(
      `${base}:score_id/`,
      { schema: resourceSchemas(tags, ScoreParams).remove('Delete a score') },
      async (request, reply) => {
        const log = await loadLog(deps, request.auth, request.params.unique_id);
        if (!(await deleteScore(db, log.id, request.params.score_id))) {
          throw notFound(`No score with id '${request.params.score_id}' on this log.`);
        }
        return reply.status(204).send(null);
      },
    );
  }
}
