/**
 * Request ids (docs/api.md "Conventions"): each request gets one, shown as `reqId` on its service log
 * lines and sent back in `X-Request-Id` (and `X-Gatelog-Request-Id`) on every answer. An id set by a
 * proxy in front of gatelog is kept when it looks like an id, so a request can be followed through both.
 * A proxied call's answer carries the provider's own x-request-id instead, which OpenAI clients surface
 * for the provider's support; gatelog's id is then in X-Gatelog-Request-Id alone.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** What an incoming id may be: printable, no spaces, short enough for a log line. */
const ACCEPTABLE_ID = /^[\w.:@/+=-]{1,128}$/;

export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && ACCEPTABLE_ID.test(given) ? given : randomUUID();
}

/** Sets both id headers of an answer. */
export function setRequestIdHeaders(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id).header('x-gatelog-request-id', request.id);
}

export function sendRequestIds(app: FastifyInstance): void {
  // onRequest runs before authentication and routing's 404: every answer carries the ids.
  app.addHook('onRequest', (request, reply, done) => {
    setRequestIdHeaders(request, reply);
    done();
  });
}
