/**
 * POST /api/anthropic/v1/messages (and /v1/anthropic/v1/messages, /v1/messages): Anthropic's Messages API,
 * proxied and logged, streamed or not (docs/api.md "Anthropic Messages API"); and its count_tokens beside
 * it, passed through without a log. Anthropic's client, pointed at `{gatelog}/api/anthropic` or at
 * `{gatelog}`, sends the gatelog key as `x-api-key` or `Authorization: Bearer`.
 */
import type { FastifyInstance, onSendHookHandler } from 'fastify';
import { RejectedBody } from '../errors.js';
import { anthropicMessagesRoute, type MessagesInput } from '../gateway/messages/route.js';
import { CountTokensAnswer, CountTokensBody, MessagesAnswer, MessagesBody } from '../gateway/messages/contract.js';
import { countTokens } from '../gateway/messages/count-tokens.js';
import { forwardedOf } from '../gateway/messages/request.js';
import type { ProxyDeps } from '../gateway/core/deps.js';
import { checkLoop, installationMark } from '../gateway/core/loop-guard.js';
import { proxiedHandler } from './proxied-call.js';
import { proxiedRoute } from './proxy-routes.js';
import { loggedJsonCall } from './logged-call.js';
import { proxiedErrors, validatedByHandler } from './plumbing/schemas.js';

/** Messages, the system prompt and tools go upstream and into the log as JSON text (escaped): NUL may be there. */
const CONTENT_FIELDS = new Set(['messages', 'system', 'tools', 'tool_choice']);

export function registerAnthropicRoutes(app: FastifyInstance, deps: ProxyDeps): void {
  const logged = loggedJsonCall({
    summary: "Create a message with Anthropic's Messages API, streamed or not; the call is logged",
    body: MessagesBody,
    answer: MessagesAnswer,
    contentFields: CONTENT_FIELDS,
    streams: true,
  });
  const config = { ...logged.config, acceptsXApiKey: true };
  const { schema } = logged;
  const handle = proxiedHandler(deps, anthropicMessagesRoute);
  // Anthropic's request id also under its own name, where Anthropic's clients read it (`_request_id`).
  const onSend: onSendHookHandler = (_request, reply, payload, done) => {
    const id = reply.getHeader('x-request-id');
    if (id !== undefined && id !== reply.getHeader('x-gatelog-request-id')) reply.header('request-id', id);
    done(null, payload);
  };
  // Also at /v1/messages: where Anthropic's client sends the call when pointed at gatelog's root, as
  // other gateways take it (OpenAI's API has no /v1/messages, so nothing else is there).
  proxiedRoute(
    app,
    'POST',
    '/anthropic/v1/messages',
    { config, schema, onSend },
    (request, reply) => {
      const { body } = request;
      const input: RejectedBody | MessagesInput =
        body instanceof RejectedBody ? body : { body, forwarded: forwardedOf(request) };
      return handle(request, reply, input);
    },
    ['/v1/messages'],
  );

  const mark = installationMark(deps.secretKey);
  proxiedRoute(
    app,
    'POST',
    '/anthropic/v1/messages/count_tokens',
    {
      // The handler answers a body the parser refused, so that /metrics counts it with the others.
      config,
      schema: {
        tags: ['Proxy'],
        summary: "Count a message's input tokens with Anthropic's count_tokens, passed through (not logged)",
        body: validatedByHandler(CountTokensBody),
        response: { 200: CountTokensAnswer, ...proxiedErrors(400, 401, 403, 413, 415, 429, 502, 503, 504) },
      },
      onSend,
    },
    async (request, reply) => {
      // A call that came back to this gatelog is refused, not sent again (loop-guard.ts).
      const loop = checkLoop(request, mark);
      const res = await countTokens(deps, request.auth, {
        body: loop.refusal ? new RejectedBody(loop.refusal) : request.body,
        forwarded: forwardedOf(request),
        via: loop.via,
      });
      if (res.upstreamRequestId !== undefined) reply.header('x-request-id', res.upstreamRequestId);
      if (res.headers) reply.headers(res.headers);
      return reply.status(res.status).header('content-type', res.contentType).send(res.body);
    },
    ['/v1/messages/count_tokens'],
  );
}
