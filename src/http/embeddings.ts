/** POST /api/embeddings (and /v1/embeddings): the OpenAI embeddings API, proxied and logged (docs/api.md "Embeddings proxy"). */
import type { FastifyInstance } from 'fastify';
import { embeddingsRoute } from '../gateway/embeddings/route.js';
import { EmbeddingsAnswer, EmbeddingsBody } from '../gateway/embeddings/contract.js';
import { loggedJsonCall } from './logged-call.js';
import type { ProxyDeps } from '../gateway/core/deps.js';
import { proxiedHandler } from './proxied-call.js';
import { proxiedRoute } from './proxy-routes.js';

/** The input goes upstream as it is (and into the log as JSON text, escaped): NUL may be there only. */
const CONTENT_FIELDS = new Set(['input']);

export function registerEmbeddingRoutes(app: FastifyInstance, deps: ProxyDeps): void {
  const { config, schema } = loggedJsonCall({
    summary: 'Create embeddings through the provider; the call is logged (docs/api.md "Embeddings proxy")',
    body: EmbeddingsBody,
    answer: EmbeddingsAnswer,
    contentFields: CONTENT_FIELDS,
    streams: false,
  });
  const handle = proxiedHandler(deps, embeddingsRoute);
  proxiedRoute(app, 'POST', '/embeddings', { config, schema }, (request, reply) =>
    handle(request, reply, request.body),
  );
}
