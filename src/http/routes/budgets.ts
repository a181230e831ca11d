/**
 * Budgets over HTTP (docs/api.md "Budgets"): GET|POST /api/budgets/, GET|PATCH|DELETE /api/budgets/{id}/.
 * Each budget is read with its current period's spend, reservations and what remains.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { requireApiKey } from '../../auth/api-keys.js';
import type { AuthContext } from '../../auth/authenticator.js';
import type { Budget, BudgetSettings } from '../../budgets/budget-store.js';
import type { BudgetKeeper } from '../../budgets/budget-keeper.js';
import type { Standing } from '../../budgets/reservation.js';
import { periodAt } from '../../budgets/period.js';
import type { AppDeps } from '../../deps.js';
import { AppError } from '../../errors.js';
import { isTimeZone } from '../../util/time-zone.js';
import { appliesToSchema, invalidTarget, organizationOrCustomer } from '../plumbing/applies-to.js';
import { pageOfList } from '../plumbing/paging.js';
import { resourceSchemas } from '../plumbing/resource-schemas.js';
import { pagedListSchema, Timestamp } from '../plumbing/schemas.js';

const PAGE_SIZE = 100;

const Name = z.string().trim().min(1).max(200).describe('Unique in the organization');
const Amount = z.number().positive().max(1e9).describe('USD a period may spend');
const PeriodName = z
  .enum(['day', 'week', 'month', 'total'])
  .describe('Days from local midnight, weeks from Monday, months from the 1st; total: never resets');
const Tz = z.string().max(100).describe('IANA time zone where periods begin, e.g. Europe/Berlin');
const Thresholds = z
  .array(z.number().positive().max(10))
  .max(10)
  .describe('Fractions of the amount at which the webhook is called once a period, e.g. [0.8, 1]');
const WebhookUrl = z
  .url({ protocol: /^https?$/ })
  .max(2000)
  .describe('Called (POST, signed) when a threshold is crossed');
const AllowUnpriced = z.boolean().describe('Let calls to models without a known price through (they reserve nothing)');

const CreateBudget = z.strictObject({
  name: Name,
  applies_to: appliesToSchema({ value: "The key's id, the customer_identifier, or (optional) the organization's id" }),
  amount_usd: Amount,
  period: PeriodName.default('month'),
  tz: Tz.default('UTC'),
  alert_thresholds: Thresholds.default([0.8, 1]),
  webhook_url: WebhookUrl.nullable().default(null),
  allow_unpriced: AllowUnpriced.default(false),
});
const PatchBudget = z.strictObject({
  name: Name.optional(),
  amount_usd: Amount.optional(),
  period: PeriodName.optional(),
  tz: Tz.optional(),
  alert_thresholds: Thresholds.optional(),
  webhook_url: WebhookUrl.nullable().optional(),
  allow_unpriced: AllowUnpriced.optional(),
});
const BudgetView = z.object({
  id: z.string().describe('UUID'),
  name: z.string(),
  applies_to: z.object({ type: z.enum(['key', 'customer', 'organization']), value: z.string() }),
  amount_usd: z.number(),
  period: PeriodName,
  tz: z.string(),
  alert_thresholds: z.array(z.number()),
  webhook_url: z.string().nullable(),
  allow_unpriced: z.boolean(),
  spent_usd: z.number().describe("The current period's spend: its calls' costs"),
  reserved_usd: z.number().describe('Held by calls in flight'),
  remaining_usd: z.number().describe('amount − spent − reserved, at least 0'),
  period_start: Timestamp.nullable().describe('null for a total budget'),
  period_end: Timestamp.nullable().describe('null for a total budget'),
  created_at: Timestamp,
  updated_at: Timestamp,
});
const WithSecret = BudgetView.extend({
  webhook_secret: z.string().optional().describe('Signs the webhook (X-Gatelog-Signature): in this answer only'),
});

const tags = ['Budgets'];
const budgets = resourceSchemas(tags, z.object({ id: z.string().describe("The budget's id") }));

const SCHEMAS = {
  create: budgets.create('Make a budget', CreateBudget, WithSecret, 404, 409),
  read: budgets.read("Read a budget and its current period's spend", BudgetView),
  change: budgets.change('Change a budget', PatchBudget, WithSecret, 409),
  remove: budgets.remove('Remove a budget'),
};

export function registerBudgetRoutes(scope: FastifyInstance, deps: AppDeps, keeper: BudgetKeeper): void {
  const app = scope.withTypeProvider<ZodTypeProvider>();
  const { store } = keeper;
  const view = async (budget: Budget, secret: string | null = null) => {
    const standing = (await keeper.standings([budget])).get(budget.id) ?? { spent: 0, reserved: 0 };
    return { ...present(budget, standing), ...(secret === null ? {} : { webhook_secret: secret }) };
  };

  app.post('/api/budgets/', { schema: SCHEMAS.create }, async (request, reply) => {
    const body = request.body;
    const settings: BudgetSettings = {
      name: body.name,
      appliesTo: await target(deps, request.auth, body.applies_to),
      amountUsd: body.amount_usd,
      period: body.period,
      tz: timeZone(body.tz),
      alertThresholds: thresholds(body.alert_thresholds),
      webhookUrl: body.webhook_url,
      allowUnpriced: body.allow_unpriced,
    };
    const { budget, secret } = await store.create(request.auth.organizationId, settings);
    return reply.status(201).send(await view(budget, secret));
  });
  app.get(
    '/api/budgets/',
    { schema: pagedListSchema(tags, "List the organization's budgets, oldest first", PAGE_SIZE, BudgetView) },
    async (request) =>
      pageOfList(request, deps.config.publicUrl, await store.list(request.auth.organizationId), async (shown) => {
        const standings = await keeper.standings(shown);
        return shown.map((b) => present(b, standings.get(b.id) ?? { spent: 0, reserved: 0 }));
      }),
  );
  app.get('/api/budgets/:id/', { schema: SCHEMAS.read }, async (request) =>
    view(await store.get(request.auth.organizationId, request.params.id)),
  );
  app.patch('/api/budgets/:id/', { schema: SCHEMAS.change }, async (request) => {
    const before = await store.get(request.auth.organizationId, request.params.id);
    const body = request.body;
    const settings: BudgetSettings = {
      name: body.name ?? before.name,
      appliesTo: before.appliesTo,
      amountUsd: body.amount_usd ?? before.amountUsd,
      period: body.period ?? before.period,
      tz: body.tz === undefined ? before.tz : timeZone(body.tz),
      alertThresholds: body.alert_thresholds === undefined ? before.alertThresholds : thresholds(body.alert_thresholds),
      webhookUrl: body.webhook_url === undefined ? before.webhookUrl : body.webhook_url,
      allowUnpriced: body.allow_unpriced ?? before.allowUnpriced,
    };
    const { budget, secret } = await store.update(request.auth.organizationId, before.id, settings);
    return view(budget, secret);
  });
  app.delete('/api/budgets/:id/', { schema: SCHEMAS.remove }, async (request, reply) => {
    await store.delete(request.auth.organizationId, request.params.id);
    return reply.status(204).send(null);
  });
}

/** What a new budget applies to: one of the organization's keys, a customer, or the organization. */
async function target(
  deps: AppDeps,
  auth: AuthContext,
  appliesTo: z.infer<typeof CreateBudget>['applies_to'],
): Promise<BudgetSettings['appliesTo']> {
  if (appliesTo.type !== 'key') return organizationOrCustomer(auth, { type: appliesTo.type, value: appliesTo.value });
  const { value } = appliesTo;
  if (value === undefined) throw invalidTarget("A key budget names its key's id.");
  await requireApiKey(deps.db.db, auth.organizationId, value).catch(() => {
    throw invalidTarget(`No key of this organization has the id '${value}'.`);
  });
  return { type: 'key', value };
}

function timeZone(tz: string): string {
  if (!isTimeZone(tz)) {
    throw new AppError(400, 'invalid_value', `'${tz}' is not a time zone (an IANA name such as Europe/Berlin).`, 'tz');
  }
  return tz;
}

function thresholds(values: number[]): number[] {
  return [...new Set(values)].sort((a, b) => a - b);
}

const iso = (ms: number) => new Date(ms).toISOString();

function present(budget: Budget, standing: Standing) {
  const bounds = periodAt(budget.period, budget.tz, Date.now());
  return {
    id: budget.id,
    name: budget.name,
    applies_to: budget.appliesTo,
    amount_usd: budget.amountUsd,
    period: budget.period,
    tz: budget.tz,
    alert_thresholds: budget.alertThresholds,
    webhook_url: budget.webhookUrl,
    allow_unpriced: budget.allowUnpriced,
    spent_usd: standing.spent,
    reserved_usd: standing.reserved,
    remaining_usd: Math.max(0, budget.amountUsd - standing.spent - standing.reserved),
    period_start: bounds.end === null ? null : iso(bounds.start),
    period_end: bounds.end === null ? null : iso(bounds.end),
    created_at: iso(budget.createdAt),
    updated_at: iso(budget.updatedAt),
  };
}
