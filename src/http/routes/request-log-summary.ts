/** The analytics route (docs/api.md "Analytics"): POST /api/request-logs/summary/. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppDeps } from '../../deps.js';
import { withQueryBudget } from '../../db/query-budget.js';
import { BUCKET_NAMES } from '../../logs/summary/buckets.js';
import {
  AGGREGATES,
  DEFAULT_LIMIT,
  GROUP_COLUMNS,
  MAX_GROUP_BY,
  MAX_LIMIT,
  MAX_METRICS,
  METRIC_COLUMNS,
  parseSummaryBody,
} from '../../logs/summary/request.js';
import { summarizeLogs } from '../../logs/summary/summary.js';
import { BODY_ERRORS, errors, validatedByHandler } from '../plumbing/schemas.js';

const Value = z.number().nullable();
const Points = z
  .array(z.array(Value))
  .describe('Per bucket, the value of each metric (count 0 and others null when empty)');

// The handler checks the body itself, to name every wrong input in its 400.
const SummaryBody = validatedByHandler(
  z.object({
    start_time: z.string().optional().describe('ISO 8601; no offset means UTC (default: an hour before end_time)'),
    end_time: z.string().optional().describe('ISO 8601, inclusive (default: now)'),
    is_test: z.boolean().optional().describe('true: only test-key logs; false (default): only production logs'),
    all_envs: z.boolean().optional().describe('true: logs of every environment (is_test, when given, wins)'),
    environment: z.string().optional().describe('Only logs of this environment'),
    filters: z.record(z.string(), z.unknown()).optional().describe('Body filters, as the request-log list takes them'),
    bucket: z.enum(BUCKET_NAMES).optional().describe('Bucket size (default auto: 30 to 120 buckets)'),
    tz: z
      .string()
      .optional()
      .describe('IANA time zone of the buckets (default UTC); days and weeks start at its midnight'),
    metrics: z
      .array(
        z.object({
          field: z
            .string()
            .optional()
            .describe(`${METRIC_COLUMNS.join(', ')} or scores__<evaluator_id>; none for count and error_rate`),
          agg: z.enum(AGGREGATES),
        }),
      )
      .min(1)
      .max(MAX_METRICS)
      .optional()
      .describe('Default [{"agg": "count"}]'),
    group_by: z
      .array(z.string())
      .max(MAX_GROUP_BY)
      .optional()
      .describe(`At most ${MAX_GROUP_BY} of ${Object.keys(GROUP_COLUMNS).join(', ')}, metadata__<key>`),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_LIMIT)
      .optional()
      .describe(`Top groups by log count (default ${DEFAULT_LIMIT}); the rest are one "other" series`),
    exact: z
      .boolean()
      .optional()
      .describe('true: read the logs themselves, never the rollups (exact percentiles over any range)'),
  }),
);

const SummaryAnswer = z.object({
  bucket: z.string().describe('The bucket size used (auto answers the size it chose: 1m, 2h, 1d, 2w …)'),
  tz: z.string(),
  start_time: z.string(),
  end_time: z.string(),
  metrics: z.array(z.object({ field: z.string().nullable(), agg: z.string() })),
  group_by: z.array(z.string()),
  buckets: z.array(z.string()).describe('The instant each bucket starts, ISO 8601 UTC'),
  series: z.array(
    z.object({
      group: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
      other: z.boolean().describe('true: every group past the top `limit`, as one'),
      points: Points,
    }),
  ),
  totals: z.object({
    values: z.array(Value).describe('Each metric over the whole range'),
    points: Points.describe('Each metric per bucket, over every group'),
  }),
  source: z.enum(['logs', 'rollups']).describe('Where the numbers were read: the logs, or the rollups of a long range'),
  approximate: z.boolean().describe('true: percentiles, min and max read from sketches, within relative_error'),
  relative_error: z
    .number()
    .nullable()
    .describe('When approximate: the most a value may be off, relative to it (0.01 = 1 %); null otherwise'),
});

export function registerSummaryRoutes(app: FastifyInstance, deps: AppDeps): void {
  app.post(
    '/api/request-logs/summary/',
    {
      schema: {
        tags: ['Logs'],
        summary: 'Metrics of the matching logs per time bucket, optionally per group (docs/api.md "Analytics")',
        body: SummaryBody,
        response: { 200: SummaryAnswer, ...errors(...BODY_ERRORS) },
      },
    },
    async (request, reply) => {
      const summaryRequest = parseSummaryBody(request.auth.organizationId, request.body);
      // Read on the read connections, within the request's query budget (GATELOG_QUERY_TIMEOUT_MS).
      const summary = await withQueryBudget(reply, deps.config.queryTimeoutMs, () =>
        summarizeLogs(deps.db.reader, deps.db.dialect, summaryRequest),
      );
      return reply.send(summary);
    },
  );
}
