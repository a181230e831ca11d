/**
 * The credentials area (docs/api.md "Providers"): POST|GET /api/provider-keys/,
 * DELETE /api/provider-keys/{provider}/ and /api/provider-keys/{provider}/keys/{key_id}/. The kinds and
 * their options are the registry's (providers/registry.ts): each option is a field of the body and of
 * the answer.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppDeps } from '../../deps.js';
import { AppError } from '../../errors.js';
import { assertUpstreamAllowed } from '../../gateway/core/credential.js';
import {
  deleteOneProviderKey,
  deleteProviderKey,
  listProviderKeys,
  setProviderKey,
} from '../../providers/credentials.js';
import type { ProviderKeyCache } from '../../providers/key-cache.js';
import type { ProviderRegistry } from '../../providers/registry.js';
import { AUTHENTICATED_ERRORS, BODY_ERRORS, errors, Timestamp } from '../plumbing/schemas.js';

const httpUrl = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//i.test(u), 'must be an http:// or https:// URL')
  .transform((u) => u.replace(/\/+$/, ''));

/** An option as the API describes it: the kinds that have it, and what it is. */
function optionText(option: { schema: z.ZodType; kinds: readonly { name: string; label: string }[] }): string {
  const { title, description } = option.schema.meta() ?? {};
  const whose = option.kinds.map((k) => `${k.label} (kind ${k.name})`).join(', ');
  return `${whose}: ${description ?? title ?? 'an option of its kind'}`;
}

function setProviderKeyBody(kinds: ProviderRegistry) {
  const options = Object.fromEntries(
    [...kinds.optionFields].map(([name, option]) => [name, option.schema.nullish().describe(optionText(option))]),
  );
  return z.object({
    provider: z
      .string()
      .min(1)
      .describe(`The provider's name: ${kinds.names.join(', ')}, or a name of your own`),
    api_key: z.string().trim().min(1, 'must not be empty').describe('Stored encrypted; never returned'),
    base_url: httpUrl
      .nullish()
      .describe('Where its calls go; required for a name gatelog does not know (an OpenAI-compatible server)'),
    kind: z
      .string()
      .nullish()
      .describe(
        `How gatelog talks to it: ${kinds.names.join(', ')} ` +
          `(default: the name when it is one, else ${kinds.defaultKind})`,
      ),
    models: z
      .array(z.string())
      .max(1000)
      .nullish()
      .describe('Model names and prefix* patterns it serves, so that calls naming them go to it'),
    ...options,
    key_id: z.string().nullish().describe('Adds or replaces this one of its keys (default: "default")'),
    weight: z.number().nullish().describe("This key's share of the calls among the provider's keys (default 1)"),
  });
}

const ProviderKeyEntry = z.object({
  key_id: z.string(),
  api_key_preview: z.string().describe('At most the first 3 and last 4 characters of the key'),
  weight: z.number(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

function providerKey(kinds: ProviderRegistry) {
  const options = Object.fromEntries(
    [...kinds.optionFields].map(([name, option]) => [
      name,
      option.schema.nullable().describe(`${optionText(option)}; null when not set or not of its kind`),
    ]),
  );
  return z.object({
    provider: z.string(),
    kind: z.string().describe(`One of ${kinds.names.join(', ')}`),
    base_url: z.string().nullable().describe("Where its calls go; null: the provider's own API"),
    models: z.array(z.string()).nullable(),
    ...options,
    api_key_preview: z.string().describe('The preview of its first key'),
    keys: z.array(ProviderKeyEntry),
    created_at: Timestamp,
    updated_at: Timestamp,
  });
}
const tags = ['Provider keys'];

export function registerProviderKeyRoutes(
  scope: FastifyInstance,
  deps: AppDeps,
  cache: ProviderKeyCache,
  kinds: ProviderRegistry,
): void {
  const app = scope.withTypeProvider<ZodTypeProvider>();
  const SetProviderKeyBody = setProviderKeyBody(kinds);
  const ProviderKey = providerKey(kinds);
  app.post(
    '/api/provider-keys/',
    {
      schema: {
        tags,
        summary: 'Register a provider (or change it) and add or replace one of its keys',
        body: SetProviderKeyBody,
        response: { 201: ProviderKey, ...errors(...BODY_ERRORS) },
      },
    },
    async (request, reply) => {
      const body = request.body;
      if (body.base_url) assertUpstreamAllowed(deps.config, body.base_url, 'base_url');
      const fields = body as Record<string, unknown>;
      const options = Object.fromEntries([...kinds.optionFields.keys()].map((name) => [name, fields[name]]));
      const view = await setProviderKey(
        deps.db.db,
        deps.secretKey,
        {
          organizationId: request.auth.organizationId,
          provider: body.provider,
          apiKey: body.api_key,
          baseUrl: body.base_url ?? null,
          kind: body.kind,
          models: body.models,
          options,
          keyId: body.key_id,
          weight: body.weight,
        },
        kinds,
      );
      cache.invalidate(request.auth.organizationId);
      return reply.status(201).send(view);
    },
  );

  app.get(
    '/api/provider-keys/',
    {
      schema: {
        tags,
        summary: "The organization's providers and their keys (previews only)",
        response: { 200: z.object({ results: z.array(ProviderKey) }), ...errors(...AUTHENTICATED_ERRORS) },
      },
    },
    async (request) => ({ results: await listProviderKeys(deps.db.db, request.auth.organizationId, kinds) }),
  );

  app.delete(
    '/api/provider-keys/:provider/',
    {
      schema: {
        tags,
        summary: 'Delete a provider with all its keys',
        params: z.object({ provider: z.string() }),
        response: { 204: z.null(), ...errors(...BODY_ERRORS, 404) },
      },
    },
    async (request, reply) => {
      const { provider } = request.params;
      const deleted = await deleteProviderKey(deps.db.db, request.auth.organizationId, provider);
      cache.invalidate(request.auth.organizationId);
      if (!deleted) throw new AppError(404, 'not_found', `No provider '${provider}' is registered.`);
      return reply.status(204).send(null);
    },
  );

  app.delete(
    '/api/provider-keys/:provider/keys/:key_id/',
    {
      schema: {
        tags,
        summary: 'Delete one key of a provider',
        params: z.object({ provider: z.string(), key_id: z.string() }),
        response: { 204: z.null(), ...errors(...BODY_ERRORS, 404) },
      },
    },
    async (request, reply) => {
      const { provider, key_id: keyId } = request.params;
      const deleted = await deleteOneProviderKey(deps.db.db, request.auth.organizationId, provider, keyId);
      cache.invalidate(request.auth.organizationId);
      if (!deleted) throw new AppError(404, 'not_found', `Provider '${provider}' has no key '${keyId}'.`);
      return reply.status(204).send(null);
    },
  );
}
