/**
 * The response cache's store (docs/api.md "Response cache"): answers kept in the database so that every
 * node shares them, by organization and the SHA-256 of the canonical request. Never on the failure path
 * of a call: a read that fails is a miss and a write that fails is dropped, both counted for /metrics.
 * Writes happen after the answer, off the call's path. The store is bounded by GATELOG_CACHE_MAX_MB: past
 * it, the oldest entries go first; expired ones go too.
 */
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/** How often (at most) the store's size is measured and the oldest or expired entries removed. */
const MAINTENANCE_EVERY_MS = 10_000;
/** Entries looked at per eviction round. */
const EVICTION_BATCH = 5_000;

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

export interface CacheStats {
  hits: number;
  misses: number;
  writes: number;
  /** Reads and writes that failed (a read that fails is a miss). */
  errors: number;
  evicted: number;
}

export class ResponseCache {
  readonly stats: CacheStats = { hits: 0, misses: 0, writes: 0, errors: 0, evicted: 0 };
  private lastMaintenance = 0;
  private maintaining: Promise<void> | null = null;
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
    const rows = entries.map(({ key, body }) => ({
      organization_id: organizationId,
      key,
      kind,
      body,
      size: Buffer.byteLength(body),
      created_at: now,
      expires_at: now + ttlS * 1000,
    }));
    const write = this.db
      .insertInto('cache_entries')
      .values(rows)
      .onConflict((oc) =>
        oc.columns(['organization_id', 'key']).doUpdateSet((eb) => ({
          body: eb.ref('excluded.body'),
          size: eb.ref('excluded.size'),
          kind: eb.ref('excluded.kind'),
          created_at: eb.ref('excluded.created_at'),
          expires_at: eb.ref('excluded.expires_at'),
        })),
      )
      .execute()
      .then(
        () => {
          this.stats.writes += rows.length;
          this.maintainSoon();
        },
        () => {
          this.stats.errors++;
        },
      );
    this.track(write);
  }

  put(organizationId: string, kind: string, key: string, body: string, ttlS: number): void {
    this.putMany(organizationId, kind, [{ key, body }], ttlS);
  }

  /** Empties an organization's cache; answers how many entries went. */
  async clear(organizationId: string): Promise<number> {
    await this.settled();
    const result = await this.db
      .deleteFrom('cache_entries')
      .where('organization_id', '=', organizationId)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** Waits for the writes in flight (a shutdown, a test that reads right after a call). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private track(promise: Promise<unknown>): void {
    this.pending.add(promise);
    void promise.finally(() => this.pending.delete(promise));
  }

  private maintainSoon(): void {
    if (this.maintaining !== null || this.now() - this.lastMaintenance < MAINTENANCE_EVERY_MS) return;
    this.lastMaintenance = this.now();
    this.maintaining = this.maintain()
      .catch(() => {
        this.stats.errors++;
      })
      .finally(() => {
        this.maintaining = null;
      });
    this.track(this.maintaining);
  }

  /** Removes what expired, then the oldest entries while the store is over its bound. */
  async maintain(): Promise<void> {
    const expired = await this.db.deleteFrom('cache_entries').where('expires_at', '<=', this.now()).executeTakeFirst();
    this.stats.evicted += Number(expired.numDeletedRows);
    for (;;) {
      const { total } = await this.db
        .selectFrom('cache_entries')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('size'), eb.lit(0)).as('total'))
        .executeTakeFirstOrThrow();
      let excess = Number(total) - this.maxBytes;
      if (excess <= 0) return;
      const oldest = await this.db
        .selectFrom('cache_entries')
        .select(['created_at', 'size'])
        .orderBy('created_at')
        .limit(EVICTION_BATCH)
        .execute();
      if (oldest.length === 0) return;
      let cutoff = Number(oldest[0].created_at);
      for (const row of oldest) {
        cutoff = Number(row.created_at);
        excess -= Number(row.size);
        if (excess <= 0) break;
      }
      const removed = await this.db.deleteFrom('cache_entries').where('created_at', '<=', cutoff).executeTakeFirst();
      this.stats.evicted += Number(removed.numDeletedRows);
    }
  }
}
