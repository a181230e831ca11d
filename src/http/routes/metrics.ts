/** GET /metrics in the Prometheus text format (docs/api.md "Metrics"), and the count of every answered request. */
import crypto from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { AppError } from '../../errors.js';
import type { Metrics } from '../../metrics.js';
import { ErrorEnvelope } from '../plumbing/schemas.js';

/** GET /metrics; with GATELOG_METRICS_TOKEN set, only for `Authorization: Bearer <token>`. */
export function registerMetricsRoute(app: FastifyInstance, metrics: Metrics, token: string | null): void {
  const expected = token === null ? null : crypto.createHash('sha256').update(token).digest();
  const schema = {
    tags: ['Service'],
    summary: 'Counters, histograms and gauges in the Prometheus text format',
    description: 'With GATELOG_METRICS_TOKEN set, it needs "Authorization: Bearer <token>".',
    security: [],
    response: {
      200: z.string().describe('Prometheus text exposition format 0.0.4'),
      401: ErrorEnvelope,
      503: ErrorEnvelope,
    },
  };
  app.get('/metrics', { schema }, async (request, reply) => {
    if (expected !== null) {
      const header = request.headers.authorization ?? '';
      const given = crypto
        .createHash('sha256')
        .update(header.startsWith('Bearer ') ? header.slice(7) : '')
        .digest();
      if (!crypto.timingSafeEqual(given, expected)) {
        throw new AppError(
          401,
          'invalid_metrics_token',
          'GET /metrics needs "Authorization: Bearer <GATELOG_METRICS_TOKEN>".',
        );
      }
    }
    const text = await metrics.exposition();
    if (text === null) {
      throw new AppError(
        503,
        'metrics_unavailable',
        "The other worker processes' figures could not be gathered; the next scrape tries again.",
        null,
        { 'retry-after': '1' },
      );
    }
    return reply.header('content-type', metrics.registry.contentType).send(text);
  });
  app.addHook('onResponse', (request, reply, done) => {
    metrics.request(request.method, request.routeOptions.url ?? '(unmatched)', reply.statusCode);
    done();
  });
}
