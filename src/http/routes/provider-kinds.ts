/**
 * GET /api/provider-kinds/ (docs/api.md "Provider keys"): the kinds of provider this gatelog can call,
 * as its registry defines them (providers/registry.ts), with their options as JSON Schema: what the web
 * UI's provider form is made from.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { PROVIDER_ROUTES } from '../../providers/kind.js';
import type { ProviderRegistry } from '../../providers/registry.js';
import { AUTHENTICATED_ERRORS, errors } from '../plumbing/schemas.js';

const ProviderKindView = z.object({
  kind: z.string().describe('What `kind` says when a provider is registered'),
  label: z.string().describe('What it is, for people'),
  routes: z.array(z.enum(PROVIDER_ROUTES)).describe('The proxied routes that call providers of this kind'),
  model_families: z
    .array(z.string())
    .describe('Regular expressions of the models the provider named as the kind serves unless another claims them'),
  base_url_required: z.boolean().describe('A provider of this kind must be given its base_url'),
  base_url_hint: z.string().describe('What its base_url looks like'),
  options: z
    .record(z.string(), z.unknown())
    .describe("JSON Schema of the kind's own settings: each is a field of a registration and of its answer"),
});

export function registerProviderKindRoutes(scope: FastifyInstance, kinds: ProviderRegistry): void {
  const results = kinds.kinds.map((kind) => ({
    kind: kind.name,
    label: kind.label,
    routes: [...kind.routes],
    model_families: kind.families.map((f) => f.source),
    base_url_required: kind.defaultBaseUrl === null,
    base_url_hint: kind.baseUrlHint,
    options: z.toJSONSchema(kind.options, { io: 'input' }) as Record<string, unknown>,
  }));
  scope.withTypeProvider<ZodTypeProvider>().get(
    '/api/provider-kinds/',
    {
      schema: {
        tags: ['Provider keys'],
        summary: 'The kinds of provider this gatelog calls, in order (the first is the default), with their options',
        response: { 200: z.object({ results: z.array(ProviderKindView) }), ...errors(...AUTHENTICATED_ERRORS) },
      },
    },
    async () => ({ results }),
  );
}
