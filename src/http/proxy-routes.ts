/**
 * Where the proxied model routes live (docs/api.md "Conventions"): under /api/, the documented form, and
 * under /v1/, because `baseURL: http://host/v1` is what every other gateway's users write. Every proxied
 * route — and the model lists, which a client asks at the same base URL — is registered through
 * `proxiedRoute`, so a route still to come gets its /v1/ alias, its place in the 404 hint for model
 * routes gatelog does not proxy (not-proxied.ts) and its OpenAPI entry by being registered here, not by
 * copies.
 */
import type { FastifyInstance, RouteHandlerMethod, RouteShorthandOptions } from 'fastify';

/** The documented prefix first; the aliases after it. */
export const PROXY_PREFIXES = ['/api', '/v1'] as const;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The documented path (under /api/) of a proxied model route, on the route and on its aliases. */
    proxiedPath?: string;
  }
}

type Method = 'GET' | 'POST' | 'DELETE';

/**
 * Registers a proxied route at `/api{path}` and at `/v1{path}`, and at any full `aliases` given (where a
 * provider's own client, pointed at gatelog's root, sends the call). An alias has the same contract and
 * the same handler; its OpenAPI entry says which route it is the alias of.
 */
export function proxiedRoute(
  scope: FastifyInstance,
  method: Method,
  path: string,
  options: RouteShorthandOptions,
  handler: RouteHandlerMethod,
  aliases: readonly string[] = [],
): void {
  const documented = `${PROXY_PREFIXES[0]}${path}`;
  for (const url of [...PROXY_PREFIXES.map((prefix) => `${prefix}${path}`), ...aliases]) {
    const schema =
      url === documented || options.schema === undefined
        ? options.schema
        : {
            ...options.schema,
            summary: `The same as ${method} ${documented}, for clients ${aliases.includes(url) ? "pointed at gatelog's root" : 'whose base URL ends in /v1'}`,
          };
    scope.route({
      ...options,
      method,
      url,
      schema,
      config: { ...options.config, proxiedPath: documented },
      handler,
    });
  }
}
