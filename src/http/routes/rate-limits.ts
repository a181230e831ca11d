/**
 * An organization's rate limits on a customer or on itself (docs/api.md "Rate limits"):
 *   GET|POST /api/rate-limits/, GET|PATCH|DELETE /api/rate-limits/{id}/.
 * A key's own limits are set on the key (PATCH /api/keys/{id}/ rate_limits), not here.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AuthContext } from '../../auth/authenticator.js';
import { MAX_PER_MINUTE } from '../../auth/key-controls.js';
import type { AppDeps } from '../../deps.js';
import { AppError } from '../../errors.js';
import type { RateLimitInput, RateLimitRules } from '../../limits/rate-limit-rules.js';
import { appliesToSchema, invalidTarget, organizationOrCustomer } from '../plumbing/applies-to.js';
import { pageOfList } from '../plumbing/paging.js';
import { resourceSchemas } from '../plumbing/resource-schemas.js';
import { pagedListSchema, Timestamp } from '../plumbing/schemas.js';

const PAGE_SIZE = 100;

const PerMinute = z.number().int().min(1).max(MAX_PER_MINUTE).nullable().optional();
const AppliesTo = appliesToSchema({
  type: "A customer's calls, or all the organization's",
  value: 'The customer_identifier; for the organization, its id (or absent)',
}).describe('What the limit applies to');
const CreateLimit = z.strictObject({
  applies_to: AppliesTo,
  requests_per_minute: PerMinute.describe('Requests a minute; null or absent: no limit on requests'),
  tokens_per_minute: PerMinute.describe('Tokens a minute, prompt and output; null or absent: no limit on tokens'),
});
const PatchLimit = z.strictObject({
  requests_per_minute: PerMinute.describe('null removes the limit on requests'),
  tokens_per_minute: PerMinute.describe('null removes the limit on tokens'),
});
const Limit = z.object({
  id: z.string().describe('UUID'),
  applies_to: z.object({ type: z.enum(['customer', 'organization']), value: z.string() }),
  requests_per_minute: z.number().nullable(),
  tokens_per_minute: z.number().nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

const tags = ['Rate limits'];
const limits = resourceSchemas(tags, z.object({ id: z.string().describe("The rate limit's id") }));

const SCHEMAS = {
  create: limits.create(
    "Limit a customer's or the organization's requests and tokens per minute",
    CreateLimit,
    Limit,
    409,
  ),
  read: limits.read('Read a rate limit', Limit),
  change: limits.change("Change a rate limit's requests or tokens per minute", PatchLimit, Limit),
  remove: limits.remove('Remove a rate limit'),
};

export function registerRateLimitRoutes(scope: FastifyInstance, deps: AppDeps, rules: RateLimitRules): void {
  const app = scope.withTypeProvider<ZodTypeProvider>();

  app.post('/api/rate-limits/', { schema: SCHEMAS.create }, async (request, reply) => {
    const body = request.body;
    const input: RateLimitInput = {
      applies_to: target(request.auth, body.applies_to),
      requests_per_minute: body.requests_per_minute ?? null,
      tokens_per_minute: body.tokens_per_minute ?? null,
    };
    requireSomeLimit(input);
    return reply.status(201).send(await rules.create(request.auth.organizationId, input));
  });
  app.get(
    '/api/rate-limits/',
    { schema: pagedListSchema(tags, "List the organization's rate limits, oldest first", PAGE_SIZE, Limit) },
    async (request) =>
      pageOfList(request, deps.config.publicUrl, await rules.list(request.auth.organizationId), (shown) => shown),
  );
  app.get('/api/rate-limits/:id/', { schema: SCHEMAS.read }, (request) =>
    rules.get(request.auth.organizationId, request.params.id),
  );
  app.patch('/api/rate-limits/:id/', { schema: SCHEMAS.change }, async (request) => {
    const before = await rules.get(request.auth.organizationId, request.params.id);
    const input: RateLimitInput = {
      applies_to: before.applies_to,
      requests_per_minute:
        request.body.requests_per_minute === undefined ? before.requests_per_minute : request.body.requests_per_minute,
      tokens_per_minute:
        request.body.tokens_per_minute === undefined ? before.tokens_per_minute : request.body.tokens_per_minute,
    };
    requireSomeLimit(input);
    return rules.update(request.auth.organizationId, request.params.id, input);
  });
  app.delete('/api/rate-limits/:id/', { schema: SCHEMAS.remove }, async (request, reply) => {
    await rules.delete(request.auth.organizationId, request.params.id);
    return reply.status(204).send(null);
  });
}

/** What a new limit applies to: a customer by its identifier, or the caller's own organization. */
function target(auth: AuthContext, appliesTo: z.infer<typeof AppliesTo>): RateLimitInput['applies_to'] {
  if (appliesTo.type === 'key') {
    throw invalidTarget(
      "A key's rate limits are set on the key itself: PATCH /api/keys/{id}/ with rate_limits.",
      'applies_to.type',
    );
  }
  return organizationOrCustomer(auth, { type: appliesTo.type, value: appliesTo.value });
}

function requireSomeLimit(input: RateLimitInput): void {
  if (input.requests_per_minute === null && input.tokens_per_minute === null) {
    throw new AppError(
      400,
      'invalid_value',
      'A rate limit needs requests_per_minute or tokens_per_minute (DELETE removes it).',
      'requests_per_minute',
    );
  }
}
