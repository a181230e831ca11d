/**
 * Headers every answer carries. `X-Content-Type-Options: nosniff`: a browser takes an answer for what its
 * Content-Type says, never guesses — a log's text or an export's CSV opened in a tab is never run as a
 * page or a script, whatever it holds. (The web UI's files carry it and a CSP of their own.)
 */
import type { FastifyInstance } from 'fastify';

export function sendSecurityHeaders(app: FastifyInstance): void {
  // onRequest runs before authentication and routing's 404: every answer carries it.
  app.addHook('onRequest', (_request, reply, done) => {
    reply.header('x-content-type-options', 'nosniff');
    done();
  });
}
