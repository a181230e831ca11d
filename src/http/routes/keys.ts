/**
 * Keys over HTTP (docs/api.md "Keys"):
 *   GET|POST /api/keys/, GET|PATCH|DELETE /api/keys/{id}/ (DELETE revokes), POST /api/keys/{id}/rotate/,
 *   GET /api/keys/current/ (the key making the request, for any key), GET /api/keys/owners/ (scope read).
 * The secret is in the answer that made it (or rotated it) only. No key makes or changes a key with more
 * than it has (auth/privilege.ts); another organization's key id is a 404.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  type ApiKeyInfo,
  createApiKey,
  listApiKeys,
  MAX_GRACE_SECONDS,
  requireApiKey,
  revokeApiKey,
  rotateApiKey,
  toKeyInfo,
  updateApiKey,
} from '../../auth/api-keys.js';
import type { AuthContext, Authenticator } from '../../auth/authenticator.js';
import {
  type KeyControls,
  MAX_PER_MINUTE,
  parseKeyControls,
  type RateLimits,
  rateLimitsView,
} from '../../auth/key-controls.js';
import { requireWithin } from '../../auth/privilege.js';
import { SCOPES } from '../../auth/scopes.js';
import type { AppDeps } from '../../deps.js';
import { AppError } from '../../errors.js';
import { pageOfList } from '../plumbing/paging.js';
import { resourceSchemas } from '../plumbing/resource-schemas.js';
import { AUTHENTICATED_ERRORS, pagedListSchema, errors, Timestamp } from '../plumbing/schemas.js';

const KEY_PAGE_SIZE = 100;

const Scopes = z
  .array(z.enum(SCOPES))
  .min(1)
  .describe('What the key may do: models, ingest, read, admin (docs/api.md "Keys")');
const AllowedModels = z
  .array(z.string().trim().min(1).max(200))
  .max(200)
  .describe('Model names, `prefix*` patterns and `provider/*`; empty allows every model');
const PerMinute = z.number().int().min(1).max(MAX_PER_MINUTE).nullable().optional();
const RateLimitsInput = z
  .strictObject({
    requests_per_minute: PerMinute.describe('Requests a minute; null or absent: no limit'),
    tokens_per_minute: PerMinute.describe('Tokens a minute (prompt and output); null or absent: no limit'),
  })
  .describe('The key\'s own rate limits (docs/api.md "Rate limits"); {} for none');
const ExpiresAt = z.iso.datetime({ offset: true }).nullable().describe('When the key stops working; null for never');
const Owner = z.strictObject({
  email: z.string().max(320).optional(),
  first_name: z.string().max(200).optional(),
  last_name: z.string().max(200).optional(),
});
const Name = z.string().trim().min(1).max(200).describe('Unique in the organization');

const CreateKey = z.strictObject({
  name: Name,
  is_test: z.boolean().default(false).describe('A test key (gl_test_…): its logs are test logs; never admin'),
  owner: Owner.optional(),
  scopes: Scopes.optional().describe('Default: every scope (a test key: every scope but admin)'),
  allowed_models: AllowedModels.default([]),
  expires_at: ExpiresAt.default(null),
  rate_limits: RateLimitsInput.optional().describe('Default: the limits of the key making the request'),
});
const PatchKey = z.strictObject({
  name: Name.optional(),
  owner: Owner.optional(),
  scopes: Scopes.optional(),
  allowed_models: AllowedModels.optional(),
  expires_at: ExpiresAt.optional(),
  rate_limits: RateLimitsInput.optional().describe('Replaces the limits whole: {} removes them'),
});
const Rotate = z.strictObject({
  grace_seconds: z
    .number()
    .int()
    .min(0)
    .max(MAX_GRACE_SECONDS)
    .default(0)
    .describe('How long the old secret keeps working (seconds, at most a week)'),
});

const Key = z.object({
  id: z.string().describe('UUID'),
  name: z.string(),
  prefix: z.string().describe('The first characters of the secret, to recognise it'),
  is_test: z.boolean(),
  owner: z.object({ email: z.string(), first_name: z.string(), last_name: z.string() }),
  scopes: z.array(z.enum(SCOPES)),
  allowed_models: z.array(z.string()),
  expires_at: Timestamp.nullable(),
  rate_limits: z.object({ requests_per_minute: z.number().nullable(), tokens_per_minute: z.number().nullable() }),
  created_at: Timestamp,
  last_used_at: Timestamp.nullable().describe('Within a minute'),
  revoked_at: Timestamp.nullable(),
});
const CreatedKey = Key.extend({ key: z.string().describe('The secret: shown in this answer only') });

function view(info: ApiKeyInfo): z.infer<typeof Key> {
  const { organization_id: _org, rate_limits: limits, ...rest } = info;
  return { ...rest, rate_limits: rateLimitsView(limits) };
}

/** Limits as the API takes them (null or absent: none) → as a key keeps them. */
function limitsOf(input: z.infer<typeof RateLimitsInput>): RateLimits {
  const limits: RateLimits = {};
  if (typeof input.requests_per_minute === 'number') limits.requests_per_minute = input.requests_per_minute;
  if (typeof input.tokens_per_minute === 'number') limits.tokens_per_minute = input.tokens_per_minute;
  return limits;
}

function expiresAtOf(value: string | null): number | null {
  if (value === null) return null;
  const at = Date.parse(value);
  if (at <= Date.now()) throw new AppError(400, 'invalid_value', 'expires_at must be in the future.', 'expires_at');
  return at;
}

function refuseTestAdmin(isTest: boolean, scopes: readonly string[] | undefined): void {
  if (isTest && scopes?.includes('admin')) {
    throw new AppError(400, 'invalid_value', 'A test key cannot hold the admin scope.', 'scopes');
  }
}

const tags = ['Keys'];
const keys = resourceSchemas(tags, z.object({ id: z.string().describe("The key's id") }));

/** Each route's contract, apart from its handler. */
const KeyOwners = z.object({
  results: z.array(
    z.object({
      name: z.string().describe("The key's name, as logs name it (organization_key__name)"),
      owner: z.object({ email: z.string(), first_name: z.string(), last_name: z.string() }),
    }),
  ),
});

const SCHEMAS = {
  create: keys.create('Make a key (its secret is in this answer only)', CreateKey, CreatedKey, 409),
  owners: {
    tags,
    summary: "The owner of each of the organization's keys that has one, by key name (for reading logs by developer)",
    response: { 200: KeyOwners, ...errors(...AUTHENTICATED_ERRORS) },
  },
  current: {
    tags,
    summary: 'The key making this request: its scopes, models and limits',
    response: { 200: Key, ...errors(...AUTHENTICATED_ERRORS) },
  },
  read: keys.read('Read a key', Key),
  change: keys.change("Change a key's name, owner, scopes, models, expiry or rate limits", PatchKey, Key, 409),
  revoke: keys.remove('Revoke a key: it stops working at once on this node, within a second on the others'),
  rotate: keys.change(
    'A new secret for the same key; the old one keeps working grace_seconds',
    Rotate.optional(),
    CreatedKey,
    409,
  ),
};

export function registerKeyRoutes(scope: FastifyInstance, deps: AppDeps, authenticator: Authenticator): void {
  const app = scope.withTypeProvider<ZodTypeProvider>();
  const db = deps.db.db;
  /** The key of this organization named by the path, which the caller's key must cover whole. */
  const target = async (auth: AuthContext, id: string) => {
    const row = await requireApiKey(db, auth.organizationId, id);
    requireWithin(auth, parseKeyControls(row), 'This key');
    return row;
  };

  app.post('/api/keys/', { schema: SCHEMAS.create }, async (request, reply) => {
    const body = request.body;
    refuseTestAdmin(body.is_test, body.scopes);
    const controls: KeyControls = {
      scopes:
        body.scopes ?? (body.is_test ? request.auth.scopes.filter((s) => s !== 'admin') : [...request.auth.scopes]),
      allowed_models: body.allowed_models,
      rate_limits: body.rate_limits === undefined ? { ...request.auth.rateLimits } : limitsOf(body.rate_limits),
      expires_at: expiresAtOf(body.expires_at),
    };
    requireWithin(request.auth, controls, 'The new key');
    const created = await createApiKey(db, {
      organizationId: request.auth.organizationId,
      name: body.name,
      isTest: body.is_test,
      owner: body.owner,
      controls,
    });
    return reply.status(201).send({ ...view(created), key: created.key });
  });
  app.get(
    '/api/keys/',
    {
      schema: pagedListSchema(
        tags,
        "List the organization's keys, revoked ones included, oldest first",
        KEY_PAGE_SIZE,
        Key,
      ),
    },
    async (request) =>
      pageOfList(request, deps.config.publicUrl, await listApiKeys(db, request.auth.organizationId), (shown) =>
        shown.map(view),
      ),
  );
  // For whoever reads logs (scope `read`): each log already names its key and its owner's email.
  app.get('/api/keys/owners/', { schema: SCHEMAS.owners }, async (request) => {
    const keys = await listApiKeys(db, request.auth.organizationId);
    const owned = keys.filter((k) => k.owner.email !== '' || k.owner.first_name !== '' || k.owner.last_name !== '');
    return { results: owned.map((k) => ({ name: k.name, owner: k.owner })) };
  });
  app.get('/api/keys/current/', { schema: SCHEMAS.current }, async (request) =>
    view(toKeyInfo(await requireApiKey(db, request.auth.organizationId, request.auth.keyId))),
  );
  app.get('/api/keys/:id/', { schema: SCHEMAS.read }, async (request) =>
    view(toKeyInfo(await requireApiKey(db, request.auth.organizationId, request.params.id))),
  );
  app.patch('/api/keys/:id/', { schema: SCHEMAS.change }, async (request) => {
    const row = await target(request.auth, request.params.id);
    const { name, owner, expires_at, rate_limits, ...rest } = request.body;
    refuseTestAdmin(row.is_test === 1, rest.scopes);
    const controls: KeyControls = {
      ...parseKeyControls(row),
      ...rest,
      ...(expires_at !== undefined ? { expires_at: expiresAtOf(expires_at) } : {}),
      ...(rate_limits !== undefined ? { rate_limits: limitsOf(rate_limits) } : {}),
    };
    requireWithin(request.auth, controls, 'The key as changed');
    const next = await updateApiKey(db, row, { name, owner, controls });
    authenticator.forgetAll();
    return view(toKeyInfo(next));
  });
  app.delete('/api/keys/:id/', { schema: SCHEMAS.revoke }, async (request, reply) => {
    const row = await target(request.auth, request.params.id);
    await revokeApiKey(db, row.id);
    authenticator.forgetAll();
    return reply.status(204).send(null);
  });
  app.post('/api/keys/:id/rotate/', { schema: SCHEMAS.rotate }, async (request) => {
    const row = await target(request.auth, request.params.id);
    if (row.revoked_at !== null) throw new AppError(409, 'key_revoked', 'A revoked key cannot be rotated.', 'id');
    const rotated = await rotateApiKey(db, row, request.body?.grace_seconds ?? 0);
    authenticator.forgetAll();
    return { ...view(rotated), key: rotated.key };
  });
}
