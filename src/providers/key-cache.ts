/**
 * Registered providers with their keys decrypted, cached per organization for one second: a proxied
 * call then costs no database query and no decryption. Changes made through this process invalidate at
 * once; changes made elsewhere (the CLI, another node) take effect within a second. While the database
 * does not answer, the last value read is used, however old: proxied calls keep working through an outage.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { loadProviders, type RegisteredProvider } from './credentials.js';

const TTL_MS = 1000;
const MAX_ENTRIES = 10_000;

export class ProviderKeyCache {
  private readonly entries = new Map<string, { value: RegisteredProvider[]; expiresAt: number }>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly secretKey: Buffer,
  ) {}

  /** The organization's providers, in the order they were registered. */
  async providers(organizationId: string): Promise<readonly RegisteredProvider[]> {
    const now = Date.now();
    const cached = this.entries.get(organizationId);
    if (cached && cached.expiresAt > now) return cached.value;
    let value: RegisteredProvider[];
    try {
      value = await loadProviders(this.db, this.secretKey, organizationId);
    } catch (err) {
      if (cached) return cached.value;
      throw err;
    }
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(organizationId, { value, expiresAt: now + TTL_MS });
    return value;
  }

  /** One provider by name, or null. */
  async get(organizationId: string, name: string): Promise<RegisteredProvider | null> {
    return (await this.providers(organizationId)).find((p) => p.name === name) ?? null;
  }

  invalidate(organizationId: string): void {
    this.entries.delete(organizationId);
  }
}
