/**
 * GET /api/models (and /v1/models): OpenAI's list of the models this key may call; GET
 * /api/anthropic/v1/models (and /v1/anthropic/v1/models): Anthropic's page of those an Anthropic
 * provider serves (docs/api.md "Model lists"). Answered by gatelog, not by a provider, and not logged.
 *
 * Anthropic's client pointed at gatelog's root asks /v1/models, OpenAI's route, as it sends its
 * messages to /v1/messages: a request carrying `anthropic-version`, which Anthropic's clients always
 * send and OpenAI's never do, gets Anthropic's page there.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { ProxyDeps } from '../gateway/core/deps.js';
import { anthropicModelPage } from '../gateway/models/anthropic-page.js';
import { availableModels } from '../gateway/models/available.js';
import { AnthropicModelPage, OpenAIModelList } from '../gateway/models/contract.js';
import { openAIModelList } from '../gateway/models/openai-list.js';
import { proxiedRoute } from './proxy-routes.js';
import { parsePositiveInt } from './plumbing/query-params.js';
import { AUTHENTICATED_ERRORS, errors, queryParam } from './plumbing/schemas.js';

/** Anthropic's page size: 20 unless asked, at most 1000. */
const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 1000;

const cursor = (where: string) =>
  z
    .string()
    .min(1)
    .optional()
    .describe(`The page of models just ${where} this id (Anthropic's paging); not with the other cursor`);

const AnthropicListQuery = z.object({
  limit: queryParam(
    'limit',
    (q) => parsePositiveInt(q, 'limit', DEFAULT_LIMIT, MAX_LIMIT),
    `Models per page, 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT})`,
  ),
  before_id: cursor('before'),
  after_id: cursor('after'),
});

const tags = ['Proxy'];
// Anthropic's clients send the key as x-api-key.
const config = { acceptsXApiKey: true };

export function registerModelListRoutes(app: FastifyInstance, deps: ProxyDeps): void {
  const anthropicKinds = deps.providerKinds.serving('messages');
  const anthropicPage = async (request: FastifyRequest) => {
    const models = await availableModels(deps, request.auth);
    const query = request.query as z.output<typeof AnthropicListQuery>;
    return anthropicModelPage(
      models.filter((m) => anthropicKinds.includes(m.kind)),
      query,
    );
  };

  proxiedRoute(
    app,
    'GET',
    '/models',
    {
      config,
      schema: {
        tags,
        summary: "The models this key may call, in OpenAI's list, each with its provider and prices",
        description:
          "A request carrying `anthropic-version` (Anthropic's client pointed at gatelog's root) gets " +
          "Anthropic's page instead, as from GET /api/anthropic/v1/models, paged by the same query.",
        querystring: AnthropicListQuery,
        response: { 200: z.union([OpenAIModelList, AnthropicModelPage]), ...errors(...AUTHENTICATED_ERRORS) },
      },
    },
    async (request) =>
      request.headers['anthropic-version'] !== undefined
        ? anthropicPage(request)
        : openAIModelList(await availableModels(deps, request.auth)),
  );

  proxiedRoute(
    app,
    'GET',
    '/anthropic/v1/models',
    {
      config,
      schema: {
        tags,
        summary: "The models this key may call through Anthropic's Messages API, in Anthropic's page",
        querystring: AnthropicListQuery,
        response: { 200: AnthropicModelPage, ...errors(...AUTHENTICATED_ERRORS) },
      },
    },
    anthropicPage,
  );
}
