/**
 * The OpenAI Responses API (docs/api.md "Responses API"), each route also under /v1: POST /api/responses
 * is a model call, proxied and logged, streamed or not; GET|DELETE /api/responses/{id},
 * GET /api/responses/{id}/input_items and POST /api/responses/{id}/cancel pass through to the provider
 * that stored the response, without a log.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { z } from 'zod';
import { checkLoop, installationMark } from '../gateway/core/loop-guard.js';
import type { ProxyDeps } from '../gateway/core/deps.js';
import { responsesRoute } from '../gateway/responses/route.js';
import {
  DeletedResponse,
  InputItemsPage,
  ResponseObject,
  ResponsesBody,
  StoredResponseParams,
  StoredResponseQuery,
} from '../gateway/responses/contract.js';
import { callStoredResponse, forwardedQuery, type StoredResponseCall } from '../gateway/responses/stored-responses.js';
import { proxiedHandler } from './proxied-call.js';
import { proxiedRoute } from './proxy-routes.js';
import { loggedJsonCall } from './logged-call.js';
import { proxiedErrors } from './plumbing/schemas.js';

/** The prompt, tools and tool choice go upstream and into the log as JSON text (escaped): NUL may be there. */
const CONTENT_FIELDS = new Set(['input', 'instructions', 'tools', 'tool_choice']);

const tags = ['Proxy'];

const RetrieveQuery = StoredResponseQuery.extend({
  stream: z
    .string()
    .optional()
    .describe("true: the response's events as an event stream (a background response, as it is generated)"),
});

export function registerResponsesRoutes(app: FastifyInstance, deps: ProxyDeps): void {
  const { config, schema } = loggedJsonCall({
    summary: 'Create a model response through the provider, streamed or not; the call is logged',
    body: ResponsesBody,
    answer: ResponseObject,
    contentFields: CONTENT_FIELDS,
    streams: true,
  });
  const handle = proxiedHandler(deps, responsesRoute);
  proxiedRoute(app, 'POST', '/responses', { config, schema }, (request, reply) => handle(request, reply, request.body));

  const stored = storedHandler(deps);
  const params = StoredResponseParams;
  proxiedRoute(
    app,
    'GET',
    '/responses/:response_id',
    {
      schema: {
        tags,
        summary: 'A stored response, from the provider that stored it (not logged)',
        produces: ['application/json', 'text/event-stream'],
        params,
        querystring: RetrieveQuery,
        response: { 200: ResponseObject, ...proxiedErrors(400, 401, 502, 503, 504) },
      },
    },
    (request, reply) => stored(request, reply, 'GET', ''),
  );
  proxiedRoute(
    app,
    'DELETE',
    '/responses/:response_id',
    {
      schema: {
        tags,
        summary: 'Delete a stored response at the provider that stored it (not logged)',
        params,
        querystring: StoredResponseQuery,
        response: { 200: DeletedResponse, ...proxiedErrors(400, 401, 413, 415, 502, 503, 504) },
      },
    },
    (request, reply) => stored(request, reply, 'DELETE', ''),
  );
  proxiedRoute(
    app,
    'GET',
    '/responses/:response_id/input_items',
    {
      schema: {
        tags,
        summary: "A page of a stored response's input items, from the provider (not logged)",
        params,
        querystring: StoredResponseQuery,
        response: { 200: InputItemsPage, ...proxiedErrors(400, 401, 502, 503, 504) },
      },
    },
    (request, reply) => stored(request, reply, 'GET', '/input_items'),
  );
  proxiedRoute(
    app,
    'POST',
    '/responses/:response_id/cancel',
    {
      schema: {
        tags,
        summary: 'Cancel a background response at the provider (not logged)',
        params,
        querystring: StoredResponseQuery,
        response: { 200: ResponseObject, ...proxiedErrors(400, 401, 413, 415, 502, 503, 504) },
      },
    },
    (request, reply) => stored(request, reply, 'POST', '/cancel'),
  );
}

type StoredHandler = (
  request: FastifyRequest,
  reply: FastifyReply,
  method: StoredResponseCall['method'],
  sub: StoredResponseCall['sub'],
) => Promise<FastifyReply>;

function storedHandler(deps: ProxyDeps): StoredHandler {
  const mark = installationMark(deps.secretKey);
  return async (request, reply, method, sub) => {
    // A call that came back to this gatelog (a base_url pointing at it) is refused, not sent again.
    const loop = checkLoop(request, mark);
    if (loop.refusal) throw loop.refusal;
    const { response_id: responseId } = request.params as { response_id: string };
    const query = request.query as { provider?: string; stream?: string };
    const res = await callStoredResponse(deps, request.auth, {
      method,
      responseId,
      sub,
      query: forwardedQuery(request.url),
      provider: query.provider ?? null,
      stream: method === 'GET' && sub === '' && query.stream === 'true',
      via: loop.via,
    });
    if (res.upstreamRequestId !== undefined) reply.header('x-request-id', res.upstreamRequestId);
    if (res.headers) reply.headers(res.headers);
    // A stream's headers go out at once, as a proxied call's do (proxied-call.ts).
    if (res.body instanceof Readable) reply.raw.once('pipe', () => reply.raw.flushHeaders());
    return reply.status(res.status).header('content-type', res.contentType).send(res.body);
  };
}
