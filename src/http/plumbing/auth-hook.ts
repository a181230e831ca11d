/**
 * The API-key check for every route registered in an authenticated scope: `Authorization: Bearer <key>`,
 * or — on a route that says so (Anthropic's Messages API, whose clients send their key that way) —
 * `x-api-key: <key>` when no Authorization header is sent.
 */
import type { FastifyInstance } from 'fastify';
import type { AuthContext, Authenticator } from '../../auth/authenticator.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook in authenticated scopes; read it only there. */
    auth: AuthContext;
    /** performance.now() when the request arrived (routing_time of proxied calls starts here). */
    receivedAt: number;
  }
  interface FastifyContextConfig {
    /** The route also takes the gatelog key as `x-api-key` (when no Authorization header is sent). */
    acceptsXApiKey?: boolean;
  }
}

export function requireAuth(scope: FastifyInstance, authenticator: Authenticator): void {
  scope.decorateRequest('auth', null as unknown as AuthContext);
  scope.decorateRequest('receivedAt', 0);
  scope.addHook('onRequest', async (request) => {
    request.receivedAt = performance.now();
    const { authorization } = request.headers;
    const apiKey = request.headers['x-api-key'];
    const keyHeader =
      request.routeOptions.config.acceptsXApiKey === true && (authorization === undefined || authorization === '')
        ? apiKey
        : undefined;
    request.auth =
      typeof keyHeader === 'string' && keyHeader.trim() !== ''
        ? await authenticator.authenticateKey(keyHeader.trim())
        : await authenticator.authenticate(authorization);
  });
}
