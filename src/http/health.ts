/** GET /health: no auth; 200 when the database answers, 503 otherwise. */
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { AppDeps } from '../app.js';

export function registerHealthRoutes(app: FastifyInstance, deps: AppDeps): void {
  app.get('/health', async (_request, reply) => {
    try {
      await sql`select 1`.execute(deps.db.db);
    } catch {
      return reply.status(503).send({ status: 'unavailable', database: 'unreachable' });
    }
    return { status: 'ok' };
  });
}
