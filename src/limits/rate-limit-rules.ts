/**
 * An organization's rate limits on its customers and on itself (docs/api.md "Rate limits"); a key's own
 * are on the key. Read on every proxied call, so each organization's are kept for a second
 * (OrganizationCache); while the database cannot be read, the last ones known apply (none, for an
 * organization not read before).
 */
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { RateLimits } from '../auth/key-controls.js';
import { OrganizationRows } from '../db/organization-rows.js';
import type { Database, RateLimitsTable } from '../db/schema.js';
import { AppError, conflict } from '../errors.js';
import { OrganizationCache } from '../util/organization-cache.js';

export type LimitTargetType = RateLimitsTable['applies_to_type'];

export interface RateLimitInfo {
  id: string;
  applies_to: { type: LimitTargetType; value: string };
  requests_per_minute: number | null;
  tokens_per_minute: number | null;
  created_at: string;
  updated_at: string;
}

export interface RateLimitInput {
  applies_to: { type: LimitTargetType; value: string };
  requests_per_minute: number | null;
  tokens_per_minute: number | null;
}

/** The limits that apply to one call besides its key's. */
export interface CallLimits {
  customer: RateLimits | null;
  organization: RateLimits | null;
}

interface OrganizationLimits {
  customers: Map<string, RateLimits>;
  organization: RateLimits | null;
}

export class RateLimitRules {
  private readonly cache = new OrganizationCache<OrganizationLimits>(
    (organizationId) => this.load(organizationId),
    () => ({ customers: new Map(), organization: null }),
  );

  private readonly rows: OrganizationRows<'rate_limits'>;

  constructor(private readonly db: Kysely<Database>) {
    this.rows = new OrganizationRows(db, 'rate_limits', 'No such rate limit.');
  }

  async forCall(organizationId: string, customer: string | null): Promise<CallLimits> {
    const limits = await this.cache.get(organizationId);
    return {
      customer: customer === null ? null : (limits.customers.get(customer) ?? null),
      organization: limits.organization,
    };
  }

  async list(organizationId: string): Promise<RateLimitInfo[]> {
    return (await this.rows.list(organizationId, 'id')).map(toInfo);
  }

  async get(organizationId: string, id: string): Promise<RateLimitInfo> {
    return toInfo(await this.rows.get(organizationId, id));
  }

  async create(organizationId: string, input: RateLimitInput): Promise<RateLimitInfo> {
    const now = Date.now();
    const row: RateLimitsTable = {
      id: crypto.randomUUID(),
      organization_id: organizationId,
      applies_to_type: input.applies_to.type,
      applies_to_value: input.applies_to.value,
      requests_per_minute: input.requests_per_minute,
      tokens_per_minute: input.tokens_per_minute,
      created_at: now,
      updated_at: now,
    };
    await this.rows.insert(row, () => alreadyLimited(input.applies_to));
    this.cache.forget(organizationId);
    return toInfo(row);
  }

  async update(organizationId: string, id: string, input: RateLimitInput): Promise<RateLimitInfo> {
    const before = await this.rows.get(organizationId, id);
    const row: RateLimitsTable = {
      ...before,
      applies_to_type: input.applies_to.type,
      applies_to_value: input.applies_to.value,
      requests_per_minute: input.requests_per_minute,
      tokens_per_minute: input.tokens_per_minute,
      updated_at: Date.now(),
    };
    await this.rows.update(organizationId, id, row, () => alreadyLimited(input.applies_to));
    this.cache.forget(organizationId);
    return toInfo(row);
  }

  async delete(organizationId: string, id: string): Promise<void> {
    await this.rows.delete(organizationId, id);
    this.cache.forget(organizationId);
  }

  private async load(organizationId: string): Promise<OrganizationLimits> {
    const rows = await this.db
      .selectFrom('rate_limits')
      .select(['applies_to_type', 'applies_to_value', 'requests_per_minute', 'tokens_per_minute'])
      .where('organization_id', '=', organizationId)
      .execute();
    const limits: OrganizationLimits = { customers: new Map(), organization: null };
    for (const row of rows) {
      const perMinute: RateLimits = {};
      if (row.requests_per_minute !== null) perMinute.requests_per_minute = row.requests_per_minute;
      if (row.tokens_per_minute !== null) perMinute.tokens_per_minute = row.tokens_per_minute;
      if (row.applies_to_type === 'organization') limits.organization = perMinute;
      else limits.customers.set(row.applies_to_value, perMinute);
    }
    return limits;
  }
}

function toInfo(row: RateLimitsTable): RateLimitInfo {
  return {
    id: row.id,
    applies_to: { type: row.applies_to_type, value: row.applies_to_value },
    requests_per_minute: row.requests_per_minute,
    tokens_per_minute: row.tokens_per_minute,
    created_at: new Date(Number(row.created_at)).toISOString(),
    updated_at: new Date(Number(row.updated_at)).toISOString(),
  };
}

function alreadyLimited(target: RateLimitInput['applies_to']): AppError {
  return conflict(
    'rate_limit_exists',
    `The ${target.type} '${target.value}' already has a rate limit; change that one instead.`,
    'applies_to',
  );
}
