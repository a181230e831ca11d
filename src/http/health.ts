/**
 * GET /health: no auth; 200 when the database answers and logs are being written, 503 otherwise.
 * `dead_letters` counts the logs the database refused, kept in the dead-letter store (0 normally).
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { sql } from 'kysely';
import type { AppDeps } from '../deps.js';

export function registerHealthRoutes(app: FastifyInstance, deps: AppDeps): void {
  const schema = {
    tags: ['Service'],
    summary: 'Whether the database answers and logs are being written (no key needed)',
    security: [],
    response: {
      200: z.object({ status: z.literal('ok'), dead_letters: z.number().int().describe('Logs the database refused') }),
      503: z.object({
        status: z.literal('unavailable'),
        database: z.enum(['ok', 'unreachable']),
        log_writer: z.enum(['ok', 'retrying']),
        log_backlog: z.number().int().describe('Logs waiting to be written'),
        dead_letters: z.number().int(),
      }),
    },
  };
  app.get('/health', { schema }, async (_request, reply) => {
    let database = true;
    try {
      await sql`select 1`.execute(deps.db.db);
    } catch {
      database = false;
    }
    if (!database || !deps.writer.healthy) {
      return reply.status(503).send({
        status: 'unavailable',
        database: database ? 'ok' : 'unreachable',
        log_writer: deps.writer.healthy ? 'ok' : 'retrying',
        log_backlog: deps.writer.backlog,
        dead_letters: deps.writer.deadLetterCount,
      });
    }
    return { status: 'ok', dead_letters: deps.writer.deadLetterCount };
  });
}
