/**
 * Registered provider keys, decrypted, cached per organization for one second: a proxied call then
 * costs no database query and no decryption. Changes made through this process invalidate at once;
 * changes made elsewhere (the CLI) take effect within a second. While the database does not answer,
 * the last value read is used, however old: proxied calls keep working through an outage.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { type ProviderName, type ResolvedProviderKey, resolveProviderKey } from './credentials.js';

const TTL_MS = 1000;
const MAX_ENTRIES = 10_000;

export class ProviderKeyCache {
  private readonly entries = new Map<string, { value: ResolvedProviderKey | null; expiresAt: number }>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly secretKey: Buffer,
  ) {}

  async get(organizationId: string, provider: ProviderName): Promise<ResolvedProviderKey | null> {
    const id = `${organizationId}:${provider}`;
    const now = Date.now();
    const cached = this.entries.get(id);
    if (cached && cached.expiresAt > now) return cached.value;
    let value: ResolvedProviderKey | null;
    try {
      value = await resolveProviderKey(this.db, this.secretKey, organizationId, provider);
    } catch (err) {
      if (cached) return cached.value;
      throw err;
    }
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(id, { value, expiresAt: now + TTL_MS });
    return value;
  }

  invalidate(organizationId: string, provider: string): void {
    this.entries.delete(`${organizationId}:${provider}`);
  }
}
