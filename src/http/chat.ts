/** POST /api/chat/completions (and /v1/chat/completions): the OpenAI chat-completions API, proxied and logged, streamed or not (docs/api.md "Chat completions"). */
import type { FastifyInstance } from 'fastify';
import { chatRoute } from '../gateway/chat/route.js';
import { ChatAnswer, ChatBody } from '../gateway/chat/contract.js';
import type { ProxyDeps } from '../gateway/core/deps.js';
import { proxiedHandler } from './proxied-call.js';
import { proxiedRoute } from './proxy-routes.js';
import { loggedJsonCall } from './logged-call.js';

/** Messages, tools and tool calls go upstream and into the log as JSON text (escaped): NUL may be there. */
const CONTENT_FIELDS = new Set(['messages', 'tools', 'tool_choice']);

export function registerChatRoutes(app: FastifyInstance, deps: ProxyDeps): void {
  const { config, schema } = loggedJsonCall({
    summary: 'Create a chat completion through the provider, streamed or not; the call is logged',
    body: ChatBody,
    answer: ChatAnswer,
    contentFields: CONTENT_FIELDS,
    streams: true,
  });
  const handle = proxiedHandler(deps, chatRoute);
  proxiedRoute(app, 'POST', '/chat/completions', { config, schema }, (request, reply) =>
    handle(request, reply, request.body),
  );
}
