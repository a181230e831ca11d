/**
 * The API-key check for every route registered in an authenticated scope: `Authorization: Bearer <key>`,
 * or — on a route that says so (Anthropic's Messages API, whose clients send their key that way) —
 * `x-api-key: <key>` when no Authorization header is sent. Then the scope the route needs
 * (route-scopes.ts): a key without it is refused with a 403 naming it.
 */
import type { FastifyInstance } from 'fastify';
import type { AuthContext, Authenticator } from '../../auth/authenticator.js';
import { requireScope } from '../../auth/privilege.js';
import { ErrorEnvelope } from './schemas.js';
import { describeScopeRule, type RouteScopeRule, scopeRuleOf } from './route-scopes.js';

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
    /** The scope the route needs, from route-scopes.ts (set when the route is registered). */
    scope?: RouteScopeRule;
  }
}

export function requireAuth(scope: FastifyInstance, authenticator: Authenticator): void {
  scope.decorateRequest('auth', null as unknown as AuthContext);
  scope.decorateRequest('receivedAt', 0);
  scope.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const rules = methods.map((m) => scopeRuleOf(m, route.url));
    const rule = rules[0];
    if (rule === undefined || rules.some((r) => r !== rule)) {
      throw new Error(`${methods.join(',')} ${route.url} has no scope: add it to src/http/plumbing/route-scopes.ts`);
    }
    route.config = { ...route.config, scope: rule };
    if (route.schema !== undefined) {
      const described = describeScopeRule(rule);
      // Every authenticated route may answer 403: a key without its scope.
      const response = route.schema.response as Record<number, unknown> | undefined;
      route.schema = {
        ...route.schema,
        ...(response !== undefined && response[403] === undefined
          ? { response: { ...response, 403: ErrorEnvelope } }
          : {}),
        'x-gatelog-scope': rule,
        description: [route.schema.description, `Needs a key with the scope: ${described}.`]
          .filter(Boolean)
          .join('\n\n'),
      } as typeof route.schema;
    }
  });
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
    const rule = request.routeOptions.config.scope;
    if (rule === undefined || rule === 'any') return;
    if (typeof rule === 'string') requireScope(request.auth, rule);
    else if (!rule.some((s) => request.auth.scopes.includes(s))) requireScope(request.auth, rule[0]);
  });
}
