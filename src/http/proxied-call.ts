/**
 * The HTTP side of a proxied call, shared by every proxied route: the loop guard, the log id header sent
 * before the call ends, the agent's session header, and the answer with the provider's request id.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RejectedBody } from '../errors.js';
import { checkLoop, installationMark } from '../gateway/core/loop-guard.js';
import type { ProxiedRoute } from '../gateway/core/contract.js';
import type { ProxyDeps } from '../gateway/core/deps.js';
import { runProxiedCall } from '../gateway/core/lifecycle.js';
import { sessionOf } from '../gateway/core/session-header.js';
import { uuidv7 } from '../logs/uuid7.js';

export type ProxiedHandler = (request: FastifyRequest, reply: FastifyReply, input: unknown) => Promise<FastifyReply>;

/** A handler that runs `route` on the input it is given (a parsed body, or the request itself). */
export function proxiedHandler<Prepared>(deps: ProxyDeps, route: ProxiedRoute<Prepared>): ProxiedHandler {
  const mark = installationMark(deps.secretKey);
  return async (request, reply, input) => {
    // A call that came back to this gatelog, or passed through too many, is refused (and logged) as a
    // body would be; any other passes on the marks it carries.
    const loop = checkLoop(request, mark);
    // The log's id is chosen now and sent on every answer, success or error, so the caller can score it.
    const logId = uuidv7();
    reply.header('x-gatelog-log-id', logId);
    const res = await runProxiedCall(deps, request.auth, route, {
      input: loop.refusal ? new RejectedBody(loop.refusal) : input,
      receivedAt: request.receivedAt,
      logId,
      via: loop.via,
      session: sessionOf(request.headers),
    });
    if (res.upstreamRequestId !== undefined) reply.header('x-request-id', res.upstreamRequestId);
    if (res.headers) reply.headers(res.headers);
    if (res.ended !== undefined) {
      // A stream's headers go out at once (Node holds them until the first byte otherwise, and the first
      // event may be seconds away): Fastify writes them, then pipes the stream into the response.
      reply.raw.once('pipe', () => reply.raw.flushHeaders());
    }
    return reply.status(res.status).header('content-type', res.contentType).send(res.body);
  };
}
