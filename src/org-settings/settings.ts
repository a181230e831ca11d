/**
 * An organization's settings (docs/api.md "Settings"): one flat object, kept as JSON text. Today the
 * response cache's defaults, which a call's own parameters override. Read on every proxied call, so
 * each node remembers an organization's settings for a second (a change reaches every node within it).
 */
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { Database } from '../db/schema.js';

/** A year: the longest a cached answer is kept. */
export const MAX_CACHE_TTL_S = 365 * 24 * 3600;
export const DEFAULT_CACHE_TTL_S = 30 * 24 * 3600;

export const CacheOptions = z.strictObject({
  cache_by_customer: z.boolean().optional().describe('Calls of different customer_identifier never share an entry'),
  omit_log: z.boolean().optional().describe('A call answered from the cache writes no log'),
});

/** A hundred years: the longest retention a setting may name (0: logs forever, content as long as its log). */
export const MAX_RETENTION_DAYS = 36_500;
const RetentionDays = z.number().int().min(0).max(MAX_RETENTION_DAYS).nullable();

export const OrganizationSettings = z.object({
  cache_enabled: z.boolean().describe('Calls are answered from the response cache when it holds their answer'),
  cache_ttl: z.number().int().min(1).max(MAX_CACHE_TTL_S).describe('Seconds a cached answer is kept'),
  cache_options: z.object({ cache_by_customer: z.boolean(), omit_log: z.boolean() }),
  retention_days: RetentionDays.describe(
    "Logs older than this many days are deleted (0: kept forever; null: the server's GATELOG_RETENTION_DAYS)",
  ),
  content_retention_days: RetentionDays.describe(
    "Prompts and completions older than this many days are cleared, metrics kept (0: as retention_days; null: the server's GATELOG_CONTENT_RETENTION_DAYS)",
  ),
});
export type OrganizationSettings = z.output<typeof OrganizationSettings>;

export const SettingsPatch = z.strictObject({
  cache_enabled: z.boolean().optional(),
  cache_ttl: z.number().int().min(1).max(MAX_CACHE_TTL_S).optional(),
  cache_options: CacheOptions.optional(),
  retention_days: RetentionDays.optional(),
  content_retention_days: RetentionDays.optional(),
});
export type SettingsPatch = z.output<typeof SettingsPatch>;

export const DEFAULT_SETTINGS: OrganizationSettings = Object.freeze({
  cache_enabled: false,
  cache_ttl: DEFAULT_CACHE_TTL_S,
  cache_options: Object.freeze({ cache_by_customer: false, omit_log: false }),
  retention_days: null,
  content_retention_days: null,
});

/** Stored settings over the defaults: a field added later reads as its default for older rows. */
export function withDefaults(stored: unknown): OrganizationSettings {
  const parsed = SettingsPatch.partial().safeParse(stored);
  const given = parsed.success ? parsed.data : {};
  return {
    cache_enabled: given.cache_enabled ?? DEFAULT_SETTINGS.cache_enabled,
    cache_ttl: given.cache_ttl ?? DEFAULT_SETTINGS.cache_ttl,
    cache_options: { ...DEFAULT_SETTINGS.cache_options, ...given.cache_options },
    retention_days: given.retention_days ?? null,
    content_retention_days: given.content_retention_days ?? null,
  };
}

export async function readSettings(db: Kysely<Database>, organizationId: string): Promise<OrganizationSettings> {
  const row = await db
    .selectFrom('organization_settings')
    .select('settings')
    .where('organization_id', '=', organizationId)
    .executeTakeFirst();
  return withDefaults(row ? JSON.parse(row.settings) : {});
}

/** Changes the fields `patch` names; answers the whole object. */
export async function patchSettings(
  db: Kysely<Database>,
  organizationId: string,
  patch: SettingsPatch,
): Promise<OrganizationSettings> {
  return db.transaction().execute(async (tx) => {
    const current = await readSettings(tx, organizationId);
    const next: OrganizationSettings = {
      cache_enabled: patch.cache_enabled ?? current.cache_enabled,
      cache_ttl: patch.cache_ttl ?? current.cache_ttl,
      cache_options: { ...current.cache_options, ...patch.cache_options },
      // null is a value here (back to the server's default), so only an absent field keeps the current one.
      retention_days: patch.retention_days === undefined ? current.retention_days : patch.retention_days,
      content_retention_days:
        patch.content_retention_days === undefined ? current.content_retention_days : patch.content_retention_days,
    };
    const row = { organization_id: organizationId, settings: JSON.stringify(next), updated_at: Date.now() };
    await tx
      .insertInto('organization_settings')
      .values(row)
      .onConflict((oc) =>
        oc.column('organization_id').doUpdateSet({ settings: row.settings, updated_at: row.updated_at }),
      )
      .execute();
    return next;
  });
}

const TTL_MS = 1000;
const MAX_ENTRIES = 10_000;

/** Each organization's settings, remembered for a second per node. */
export class SettingsCache {
  private readonly entries = new Map<string, { at: number; settings: Promise<OrganizationSettings> }>();

  constructor(private readonly db: Kysely<Database>) {}

  get(organizationId: string): Promise<OrganizationSettings> {
    const now = Date.now();
    const hit = this.entries.get(organizationId);
    if (hit && now - hit.at < TTL_MS) return hit.settings;
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    const settings = readSettings(this.db, organizationId);
    this.entries.set(organizationId, { at: now, settings });
    settings.catch(() => this.entries.delete(organizationId));
    return settings;
  }

  /** This node sees its own change at once. */
  forget(organizationId: string): void {
    this.entries.delete(organizationId);
  }
}
