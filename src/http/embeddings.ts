/** POST /api/embeddings (and /v1/embeddings): the OpenAI embeddings API, proxied and logged (docs/api.md "Embeddings proxy"). */
import type { FastifyInstance } from 'fastify';
import { embeddingsRoute } from '../gateway/embeddings/route.js';
import { EmbeddingsAnswer, EmbeddingsBody } from '../gateway/embeddings/contract.js';
import { proxiedErrors, validatedByHandler } from './plumbing/schemas.js';
import type { ProxyDeps } from '../gateway/core/deps.js';
import { proxiedHandler } from './proxied-call.js';
import { proxiedRoute } from './proxy-routes.js';

export function registerEmbeddingRoutes(app: FastifyInstance, deps: ProxyDeps): void {
  // A body refused by the JSON parser reaches the handler, which logs the call before answering 400.
  // The input goes upstream as it is (and into the log as JSON text, escaped): NUL may be there only.
  const config = { acceptsRejectedBody: true, nulAllowed: (path: readonly (string | number)[]) => path[0] === 'input' };
  const schema = {
    tags: ['Proxy'],
    summary: 'Create embeddings through the provider; the call is logged (docs/api.md "Embeddings proxy")',
    body: validatedByHandler(EmbeddingsBody),
    response: { 200: EmbeddingsAnswer, ...proxiedErrors(400, 401, 402, 413, 415, 429, 502, 503, 504) },
  };
  const handle = proxiedHandler(deps, embeddingsRoute);
  proxiedRoute(app, 'POST', '/embeddings', { config, schema }, (request, reply) =>
    handle(request, reply, request.body),
  );
}
