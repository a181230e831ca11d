/** The Bearer-key check for every route registered in an authenticated scope. */
import type { FastifyInstance } from 'fastify';
import type { AuthContext, Authenticator } from '../auth/authenticator.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook in authenticated scopes; read it only there. */
    auth: AuthContext;
    /** performance.now() when the request arrived (routing_time of proxied calls starts here). */
    receivedAt: number;
  }
}

export function requireAuth(scope: FastifyInstance, authenticator: Authenticator): void {
  scope.decorateRequest('auth', null as unknown as AuthContext);
  scope.decorateRequest('receivedAt', 0);
  scope.addHook('onRequest', async (request) => {
    request.receivedAt = performance.now();
    request.auth = await authenticator.authenticate(request.headers.authorization);
  });
}
