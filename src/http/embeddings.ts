/** POST /api/embeddings: the OpenAI embeddings API, proxied and logged (docs/api.md "Embeddings proxy"). */
import type { FastifyInstance } from 'fastify';
import { proxyEmbeddings } from '../gateway/embeddings.js';
import { EmbeddingsAnswer, EmbeddingsBody } from '../gateway/embeddings-contract.js';
import { proxiedErrors, validatedByHandler } from './schemas.js';
import { RejectedBody } from '../errors.js';
import { installationMark, ownCallError } from '../gateway/loop-guard.js';
import type { ProxyDeps } from '../gateway/proxy-call.js';
import { uuidv7 } from '../logs/uuid7.js';

export function registerEmbeddingRoutes(app: FastifyInstance, deps: ProxyDeps): void {
  // A body refused by the JSON parser reaches the handler, which logs the call before answering 400.
  const mark = installationMark(deps.secretKey);
  // The input goes upstream as it is (and into the log as JSON text, escaped): NUL may be there only.
  const config = { acceptsRejectedBody: true, nulAllowed: (path: readonly (string | number)[]) => path[0] === 'input' };
  const schema = {
    tags: ['Proxy'],
    summary: 'Create embeddings through the provider; the call is logged (docs/api.md "Embeddings proxy")',
    body: validatedByHandler(EmbeddingsBody),
    response: { 200: EmbeddingsAnswer, ...proxiedErrors(400, 401, 413, 415, 502, 503, 504) },
  };
  app.post('/api/embeddings', { config, schema }, async (request, reply) => {
    // A call that came back from this gatelog is refused (and logged) as a body would be.
    const loop = ownCallError(request, mark);
    const body = loop ? new RejectedBody(loop) : request.body;
    // Tracked: on shutdown the log writer stays open until this call's log is queued.
    // The log's id is chosen now and sent on every answer, success or error, so the caller can score it.
    const logId = uuidv7();
    reply.header('x-gatelog-log-id', logId);
    const res = await deps.writer.track(proxyEmbeddings(deps, request.auth, body, request.receivedAt, logId));
    if (res.upstreamRequestId !== undefined) reply.header('x-request-id', res.upstreamRequestId);
    return reply.status(res.status).header('content-type', res.contentType).send(res.body);
  });
}
