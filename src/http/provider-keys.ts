/** The credentials area (docs/api.md "Provider keys"): POST|GET /api/provider-keys/, DELETE /api/provider-keys/{provider}/. */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppDeps } from '../deps.js';
import { AppError } from '../errors.js';
import { assertUpstreamAllowed } from '../gateway/proxy-call.js';
import { deleteProviderKey, listProviderKeys, setProviderKey } from '../providers/credentials.js';
import type { ProviderKeyCache } from '../providers/key-cache.js';
import { AUTHENTICATED_ERRORS, BODY_ERRORS, errors, Timestamp } from './schemas.js';

const httpUrl = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//i.test(u), 'must be an http:// or https:// URL')
  .transform((u) => u.replace(/\/+$/, ''));

const SetProviderKeyBody = z.object({
  provider: z.string().min(1).describe('openai'),
  api_key: z.string().trim().min(1, 'must not be empty').describe('Stored encrypted; never returned'),
  base_url: httpUrl.nullish().describe('Send its calls to another OpenAI-compatible server'),
});

const ProviderKey = z.object({
  provider: z.string(),
  base_url: z.string().nullable().describe('Where its calls go; null: the default upstream (GATELOG_OPENAI_BASE_URL)'),
  api_key_preview: z.string().describe('At most the first 3 and last 4 characters of the key'),
  created_at: Timestamp,
  updated_at: Timestamp,
});
const tags = ['Provider keys'];

export function registerProviderKeyRoutes(scope: FastifyInstance, deps: AppDeps, cache: ProviderKeyCache): void {
  const app = scope.withTypeProvider<ZodTypeProvider>();
  app.post(
    '/api/provider-keys/',
    {
      schema: {
        tags,
        summary: "Register (or replace) the organization's key for a provider",
        body: SetProviderKeyBody,
        response: { 201: ProviderKey, ...errors(...BODY_ERRORS) },
      },
    },
    async (request, reply) => {
      const body = request.body;
      if (body.base_url) assertUpstreamAllowed(deps.config, body.base_url, 'base_url');
      const view = await setProviderKey(deps.db.db, deps.secretKey, {
        organizationId: request.auth.organizationId,
        provider: body.provider,
        apiKey: body.api_key,
        baseUrl: body.base_url ?? null,
      });
      cache.invalidate(request.auth.organizationId, view.provider);
      return reply.status(201).send(view);
    },
  );

  app.get(
    '/api/provider-keys/',
    {
      schema: {
        tags,
        summary: "The organization's provider keys (previews only)",
        response: { 200: z.object({ results: z.array(ProviderKey) }), ...errors(...AUTHENTICATED_ERRORS) },
      },
    },
    async (request) => ({ results: await listProviderKeys(deps.db.db, request.auth.organizationId) }),
  );

  app.delete(
    '/api/provider-keys/:provider/',
    {
      schema: {
        tags,
        summary: "Delete the organization's key for a provider",
        params: z.object({ provider: z.string() }),
        response: { 204: z.null(), ...errors(...BODY_ERRORS, 404) },
      },
    },
    async (request, reply) => {
      const { provider } = request.params;
      const deleted = await deleteProviderKey(deps.db.db, request.auth.organizationId, provider);
      cache.invalidate(request.auth.organizationId, provider);
      if (!deleted) throw new AppError(404, 'not_found', `No key is registered for provider '${provider}'.`);
      return reply.status(204).send(null);
    },
  );
}
