/**
 * Budgets as an organization sets them (docs/api.md "Budgets"). Read on every proxied call, so each
 * organization's are kept for a second per node (OrganizationCache). A budget's webhook secret is made
 * with it, shown once, and kept sealed with the server's secret key.
 */
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import { open, seal } from '../auth/secret-box.js';
import { OrganizationRows } from '../db/organization-rows.js';
import type { BudgetsTable, Database } from '../db/schema.js';
import { conflict } from '../errors.js';
import { OrganizationCache } from '../util/organization-cache.js';
import type { Period } from './period.js';

export type BudgetTargetType = BudgetsTable['applies_to_type'];

/** A budget as it is set (made or changed). */
export interface BudgetSettings {
  name: string;
  appliesTo: { type: BudgetTargetType; value: string };
  amountUsd: number;
  period: Period;
  tz: string;
  /** Fractions of the amount, ascending. */
  alertThresholds: number[];
  webhookUrl: string | null;
  allowUnpriced: boolean;
}

export interface Budget extends BudgetSettings {
  id: string;
  organizationId: string;
  createdAt: number;
  updatedAt: number;
}

export class BudgetStore {
  private readonly cache = new OrganizationCache<Budget[]>(
    (organizationId) => this.list(organizationId),
    () => [],
  );

  private readonly rows: OrganizationRows<'budgets'>;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly secretKey: Buffer,
  ) {
    this.rows = new OrganizationRows(db, 'budgets', 'No such budget.');
  }

  /** The organization's budgets as calls see them: a second old at most. */
  cached(organizationId: string): Promise<Budget[]> {
    return this.cache.get(organizationId);
  }

  async list(organizationId: string): Promise<Budget[]> {
    return (await this.rows.list(organizationId, 'id')).map(toBudget);
  }

  async get(organizationId: string, id: string): Promise<Budget> {
    return toBudget(await this.rows.get(organizationId, id));
  }

  /** A new budget, and its webhook secret (null without a webhook). */
  async create(organizationId: string, settings: BudgetSettings): Promise<{ budget: Budget; secret: string | null }> {
    const now = Date.now();
    const id = crypto.randomUUID();
    const secret = settings.webhookUrl === null ? null : newSecret();
    const row: BudgetsTable = {
      id,
      organization_id: organizationId,
      ...stored(settings),
      webhook_secret_encrypted: secret === null ? null : seal(this.secretKey, secret, id),
      created_at: now,
      updated_at: now,
    };
    await this.rows.insert(row, () => budgetExists(settings.name));
    this.cache.forget(organizationId);
    return { budget: toBudget(row), secret };
  }

  /** Changes a budget; a webhook added where there was none gets its secret, returned this once. */
  async update(
    organizationId: string,
    id: string,
    settings: BudgetSettings,
  ): Promise<{ budget: Budget; secret: string | null }> {
    const before = await this.rows.get(organizationId, id);
    const secret = settings.webhookUrl !== null && before.webhook_secret_encrypted === null ? newSecret() : null;
    const row: BudgetsTable = {
      ...before,
      ...stored(settings),
      webhook_secret_encrypted: secret === null ? before.webhook_secret_encrypted : seal(this.secretKey, secret, id),
      updated_at: Date.now(),
    };
    await this.rows.update(organizationId, id, row, () => budgetExists(settings.name));
    this.cache.forget(organizationId);
    return { budget: toBudget(row), secret };
  }

  async delete(organizationId: string, id: string): Promise<void> {
    await this.rows.delete(organizationId, id);
    this.cache.forget(organizationId);
  }

  /** The webhook's signing secret of a budget (any organization's: for delivering its alerts), or null. */
  async webhookSecret(id: string): Promise<string | null> {
    const row = await this.db
      .selectFrom('budgets')
      .select('webhook_secret_encrypted')
      .where('id', '=', id)
      .executeTakeFirst();
    const sealed = row?.webhook_secret_encrypted ?? null;
    return sealed === null ? null : open(this.secretKey, sealed, id);
  }
}

const budgetExists = (name: string) => conflict('budget_exists', `A budget named '${name}' already exists.`, 'name');

const newSecret = () => `whsec_${crypto.randomBytes(32).toString('base64url')}`;

function stored(settings: BudgetSettings) {
  return {
    name: settings.name,
    applies_to_type: settings.appliesTo.type,
    applies_to_value: settings.appliesTo.value,
    amount_usd: settings.amountUsd,
    period: settings.period,
    tz: settings.tz,
    alert_thresholds: JSON.stringify(settings.alertThresholds),
    webhook_url: settings.webhookUrl,
    allow_unpriced: settings.allowUnpriced ? 1 : 0,
  };
}

function toBudget(row: BudgetsTable): Budget {
  let thresholds: number[] = [];
  try {
    const parsed: unknown = JSON.parse(row.alert_thresholds);
    if (Array.isArray(parsed)) thresholds = parsed.filter((t): t is number => typeof t === 'number');
  } catch {
    // A column that cannot be read alerts at no threshold rather than stopping every call.
  }
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    appliesTo: { type: row.applies_to_type, value: row.applies_to_value },
    amountUsd: Number(row.amount_usd),
    period: row.period,
    tz: row.tz,
    alertThresholds: thresholds,
    webhookUrl: row.webhook_url,
    allowUnpriced: row.allow_unpriced === 1,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}
