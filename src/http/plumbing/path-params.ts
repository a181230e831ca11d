/**
 * Path parameters are ids and names: one holding a NUL character names nothing gatelog stores
 * (PostgreSQL text cannot hold NUL, and would refuse the lookup), so it is a 404 before any query.
 */
import type { FastifyInstance } from 'fastify';
import { notFound } from '../../errors.js';
import { hasNul } from '../../util/nul.js';

export function refuseImpossiblePathParams(app: FastifyInstance): void {
  app.addHook('preValidation', (request, _reply, done) => {
    const params = request.params as Record<string, string> | undefined;
    if (params && Object.values(params).some((v) => typeof v === 'string' && hasNul(v))) {
      return done(notFound('Not found: a path parameter holds a NUL character.'));
    }
    done();
  });
}
