/** POST /api/embeddings: the OpenAI embeddings API, proxied and logged (CONTRACT §12). */
import type { FastifyInstance } from 'fastify';
import { proxyEmbeddings } from '../gateway/embeddings.js';
import type { ProxyDeps } from '../gateway/proxy-call.js';

export function registerEmbeddingRoutes(app: FastifyInstance, deps: ProxyDeps): void {
  app.post('/api/embeddings', async (request, reply) => {
    // Tracked: on shutdown the log writer stays open until this call's log is queued.
    const res = await deps.writer.track(proxyEmbeddings(deps, request.auth, request.body, request.receivedAt));
    return reply.status(res.status).header('content-type', res.contentType).send(res.body);
  });
}
