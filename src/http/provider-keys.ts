/** The credentials area (docs/api.md "Provider keys"): POST|GET /api/provider-keys/, DELETE /api/provider-keys/{provider}/. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppDeps } from '../app.js';
import { AppError } from '../errors.js';
import { assertUpstreamAllowed } from '../gateway/proxy-call.js';
import { deleteProviderKey, listProviderKeys, setProviderKey } from '../providers/credentials.js';
import type { ProviderKeyCache } from '../providers/key-cache.js';
import { parseWith } from './validation.js';

const httpUrl = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//i.test(u), 'must be an http:// or https:// URL')
  .transform((u) => u.replace(/\/+$/, ''));

const SetProviderKeyBody = z.object({
  provider: z.string().min(1),
  api_key: z.string().trim().min(1, 'must not be empty'),
  base_url: httpUrl.nullish(),
});

export function registerProviderKeyRoutes(app: FastifyInstance, deps: AppDeps, cache: ProviderKeyCache): void {
  app.post('/api/provider-keys/', async (request, reply) => {
    const body = parseWith(SetProviderKeyBody, request.body ?? {});
    if (body.base_url) assertUpstreamAllowed(deps.config, body.base_url, 'base_url');
    const view = await setProviderKey(deps.db.db, deps.secretKey, {
      organizationId: request.auth.organizationId,
      provider: body.provider,
      apiKey: body.api_key,
      baseUrl: body.base_url ?? null,
    });
    cache.invalidate(request.auth.organizationId, view.provider);
    return reply.status(201).send(view);
  });

  app.get('/api/provider-keys/', async (request) => ({
    results: await listProviderKeys(deps.db.db, request.auth.organizationId),
  }));

  app.delete<{ Params: { provider: string } }>('/api/provider-keys/:provider/', async (request, reply) => {
    const deleted = await deleteProviderKey(deps.db.db, request.auth.organizationId, request.params.provider);
    cache.invalidate(request.auth.organizationId, request.params.provider);
    if (!deleted)
      throw new AppError(404, 'not_found', `No key is registered for provider '${request.params.provider}'.`);
    return reply.status(204).send();
  });
}
