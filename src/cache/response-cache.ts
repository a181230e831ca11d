/**
 * The response cache's store (docs/api.md "Response cache"): answers kept in the database so that every
 * node shares them, by organization and the SHA-256 of the canonical request. Never on the failure path
 * of a call: a read that fails is a miss and a write that fails is dropped, both counted for /metrics.
 * Writes happen after the answer, off the call's path, one transaction at a time per node (a queue
 * drained in batches): each counts its bytes and makes room before it commits (cache-store.ts), so the
 * store never holds more than GATELOG_CACHE_MAX_MB, and a node never holds more than one connection for
 * them. Expired entries go as writes come (at most every 10 s) and in the retention sweep.
 */
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { type CacheRow, clearOrganization, removeExpired, storeEntries } from './cache-store.js';

/** How often (at most) the expired entries are looked for after a write. */
const MAINTENANCE_EVERY_MS = 10_000;
/** Answers stored per transaction, and their bytes at most (one answer larger goes alone). */
const WRITE_BATCH_ROWS = 500;
const WRITE_BATCH_BYTES = 8 * 1024 * 1024;
/** Bytes of answers waiting to be written; past it new ones are dropped (a slow database must not fill memory). */
const MAX_QUEUED_BYTES = 64 * 1024 * 1024;

/** JSON with every object's keys in order: the same request, whatever order its fields came in. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k];
    return sorted;
  });
}

export const cacheKey = (parts: unknown) => crypto.createHash('sha256').update(canonicalJson(parts)).digest('hex');

/**
 * What a call's own provider key (customer_credentials) adds to its key: a digest, never the key, so an
 * answer fetched with one customer's key is never served to a call made with another's.
 */
export const credentialDigest = (apiKey: string) =>
  crypto.createHash('sha256').update('gatelog cache credential\0').update(apiKey).digest('hex');

export interface CacheStats {
  hits: number;
  misses: number;
  writes: number;
  /** Reads and writes that failed (a read that fails is a miss). */
  errors: number;
  /** Entries removed: expired, or evicted to make room. */
  evicted: number;
  /** Answers not stored: larger than the bound alone, over their organization's room, or the queue full. */
  skipped: number;
}

export class ResponseCache {
  readonly stats: CacheStats = { hits: 0, misses: 0, writes: 0, errors: 0, evicted: 0, skipped: 0 };
  private lastMaintenance = 0;
  private readonly queue: CacheRow[] = [];
  private queuedBytes = 0;
  private writing: Promise<void> | null = null;
  private readonly pending = new Set<Promise<unknown>>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly maxBytes: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The stored answers among `keys` that have not expired (a failed read: none). */
  async getMany(organizationId: string, keys: readonly string[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    if (keys.length === 0) return found;
    try {
      const rows = await this.db
        .selectFrom('cache_entries')
        .select(['key', 'body'])
        .where('organization_id', '=', organizationId)
        .where('key', 'in', [...new Set(keys)])
        .where('expires_at', '>', this.now())
        .execute();
      for (const row of rows) found.set(row.key, row.body);
    } catch {
      this.stats.errors++;
    }
    this.stats.hits += found.size;
    this.stats.misses += keys.length - found.size;
    return found;
  }

  async get(organizationId: string, key: string): Promise<string | null> {
    return (await this.getMany(organizationId, [key])).get(key) ?? null;
  }

  /** Stores answers, in the background: the call that produced them does not wait. */
  putMany(organizationId: string, kind: string, entries: readonly { key: string; body: string }[], ttlS: number): void {
    if (entries.length === 0) return;
    const now = this.now();
    for (const { key, body } of entries) {
      const size = Buffer.byteLength(body);
      if (this.queuedBytes + size > MAX_QUEUED_BYTES) {
        this.stats.skipped++;
        continue;
      }
      this.queuedBytes += size;
      this.queue.push({
        organization_id: organizationId,
        key,
        kind,
        body,
        size,
        created_at: now,
        expires_at: now + ttlS * 1000,
      });
    }
    this.startWriting();
  }

  /** One drain at a time; one that ends with answers queued behind it (queued as it ended) starts again. */
  private startWriting(): void {
    if (this.writing !== null || this.queue.length === 0) return;
    this.writing = this.drain().finally(() => {
      this.writing = null;
      this.startWriting();
    });
    this.track(this.writing);
  }

  put(organizationId: string, kind: string, key: string, body: string, ttlS: number): void {
    this.putMany(organizationId, kind, [{ key, body }], ttlS);
  }

  /** Empties an organization's cache; answers how many entries went. */
  async clear(organizationId: string): Promise<number> {
    await this.settled();
    return clearOrganization(this.db, organizationId);
  }

  /** Waits for the writes in flight (a shutdown, a test that reads right after a call). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private track(promise: Promise<unknown>): void {
    this.pending.add(promise);
    void promise.finally(() => this.pending.delete(promise));
  }

  /** Writes what is queued, a batch per transaction, until nothing is; then, now and then, the expired go. */
  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      let bytes = 0;
      let count = 0;
      while (count < this.queue.length && count < WRITE_BATCH_ROWS) {
        if (count > 0 && bytes + this.queue[count].size > WRITE_BATCH_BYTES) break;
        bytes += this.queue[count].size;
        count++;
      }
      const batch = this.queue.splice(0, count);
      this.queuedBytes -= bytes;
      try {
        const outcome = await storeEntries(this.db, batch, this.maxBytes);
        this.stats.writes += outcome.stored;
        this.stats.evicted += outcome.evicted;
        this.stats.skipped += outcome.skipped;
      } catch {
        this.stats.errors++;
      }
    }
    if (this.now() - this.lastMaintenance >= MAINTENANCE_EVERY_MS) {
      this.lastMaintenance = this.now();
      await this.maintain().catch(() => {
        this.stats.errors++;
      });
    }
  }

  /** Removes what expired (the bound itself is kept by every write). */
  async maintain(): Promise<void> {
    this.stats.evicted += await removeExpired(this.db, this.now());
  }
}
