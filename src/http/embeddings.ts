/** POST /api/embeddings: the OpenAI embeddings API, proxied and logged (CONTRACT §12). */
import type { FastifyInstance } from 'fastify';
import { proxyEmbeddings } from '../gateway/embeddings.js';
import type { ProxyDeps } from '../gateway/proxy-call.js';

export function registerEmbeddingRoutes(app: FastifyInstance, deps: ProxyDeps): void {
  // A body refused by the JSON parser reaches the handler, which logs the call before answering 400.
  app.post('/api/embeddings', { config: { acceptsRejectedBody: true } }, async (request, reply) => {
    // Tracked: on shutdown the log writer stays open until this call's log is queued.
    const res = await deps.writer.track(proxyEmbeddings(deps, request.auth, request.body, request.receivedAt));
    return reply.status(res.status).header('content-type', res.contentType).send(res.body);
  });
}
