/**
 * The response cache's rows and their bytes (docs/api.md "Response cache"). Every change to
 * `cache_entries` goes through here and changes `cache_usage` (each organization's stored bytes) in the
 * same transaction, under one lock, so the bytes are known without summing the table and a write evicts
 * before it commits: whatever a reader on any node sees holds at most GATELOG_CACHE_MAX_MB.
 */
import { type Kysely, type Transaction, sql } from 'kysely';
import { isPostgres } from '../db/dialect.js';
import type { CacheEntriesTable, Database } from '../db/schema.js';
import { evictionQuotas } from './fair-eviction.js';

/** One answer to keep: a row of cache_entries. */
export type CacheRow = CacheEntriesTable;

export interface StoreOutcome {
  /** Answers now stored. */
  stored: number;
  /** Entries removed to make room (another organization's or the writer's own). */
  evicted: number;
  /** Answers not stored: one alone larger than the bound, or evicted by the same write (its own oldest). */
  skipped: number;
}

/** Serialises every node's changes to the cache (PostgreSQL); a SQLite write transaction is exclusive already. */
const PG_LOCK_KEY = 0x676c_6361_6368;
/** Rows read per round when looking for an organization's oldest entries or for expired ones. */
const BATCH = 500;
/**
 * Eviction rounds one write may take (5,000 entries): a write holds the cache's lock, and on SQLite the
 * main connection, while it evicts. Only a lowered bound asks more of one write.
 */
const MAX_EVICTION_ROUNDS = 10;

async function lockCache(trx: Transaction<Database>): Promise<void> {
  if (isPostgres(trx)) await sql`select pg_advisory_xact_lock(${PG_LOCK_KEY})`.execute(trx);
}

/** Adds each organization's change to its bytes (never below 0: a row removed that was never counted). */
async function applyDeltas(trx: Transaction<Database>, deltas: Map<string, number>): Promise<void> {
  for (const [organizationId, delta] of deltas) {
    if (delta === 0) continue;
    await trx
      .insertInto('cache_usage')
      .values({ organization_id: organizationId, bytes: Math.max(0, delta) })
      .onConflict((oc) =>
        oc.column('organization_id').doUpdateSet({
          bytes: sql<number>`case when cache_usage.bytes + ${delta} > 0 then cache_usage.bytes + ${delta} else 0 end`,
        }),
      )
      .execute();
  }
}

const add = (deltas: Map<string, number>, organizationId: string, bytes: number) =>
  deltas.set(organizationId, (deltas.get(organizationId) ?? 0) + bytes);

/** Removes an organization's entries by key; answers their bytes and count. */
async function removeKeys(
  trx: Transaction<Database>,
  organizationId: string,
  keys: readonly string[],
): Promise<{ bytes: number; count: number }> {
  if (keys.length === 0) return { bytes: 0, count: 0 };
  const rows = await trx
    .deleteFrom('cache_entries')
    .where('organization_id', '=', organizationId)
    .where('key', 'in', keys)
    .returning('size')
    .execute();
  return { bytes: rows.reduce((sum, r) => sum + Number(r.size), 0), count: rows.length };
}

/**
 * Stores answers, making room first: past the bound, the organizations holding the most give up their
 * oldest entries (fair-eviction.ts), this write's own counted as theirs. An answer larger than the bound
 * alone is not stored. One transaction: the entries, the evictions and the bytes change together.
 */
export async function storeEntries(
  db: Kysely<Database>,
  entries: readonly CacheRow[],
  maxBytes: number,
): Promise<StoreOutcome> {
  // The same key twice in one write: the later answer is the one kept.
  const latest = new Map<string, CacheRow>();
  for (const row of entries) latest.set(`${row.organization_id}\0${row.key}`, row);
  const fitting = [...latest.values()].filter((row) => row.size <= maxBytes);
  const outcome: StoreOutcome = { stored: 0, evicted: 0, skipped: entries.length - fitting.length };
  if (fitting.length === 0) return outcome;
  const byOrganization = new Map<string, CacheRow[]>();
  for (const row of fitting)
    byOrganization.set(row.organization_id, [...(byOrganization.get(row.organization_id) ?? []), row]);

  await db.transaction().execute(async (trx) => {
    await lockCache(trx);
    const deltas = new Map<string, number>();
    // An answer that replaces a stored one frees the stored one's bytes.
    for (const [organizationId, rows] of byOrganization) {
      const replaced = await removeKeys(
        trx,
        organizationId,
        rows.map((r) => r.key),
      );
      add(deltas, organizationId, -replaced.bytes);
    }
    const counted = await trx
      .selectFrom('cache_usage')
      .select(['organization_id', 'bytes'])
      .where('bytes', '>', 0)
      .execute();
    const stored = new Map(counted.map((r) => [r.organization_id, Number(r.bytes)]));
    for (const [organizationId, delta] of deltas) stored.set(organizationId, (stored.get(organizationId) ?? 0) + delta);
    const incoming = new Map([...byOrganization].map(([id, rows]) => [id, rows.reduce((s, r) => s + r.size, 0)]));
    const ids = new Set([...stored.keys(), ...incoming.keys()]);
    const usage = [...ids].map((id) => ({
      organizationId: id,
      stored: Math.max(0, stored.get(id) ?? 0),
      incoming: incoming.get(id) ?? 0,
    }));
    const total = usage.reduce((sum, u) => sum + u.stored + u.incoming, 0);

    const dropped = new Set<CacheRow>();
    let left = total;
    let rounds = 0;
    const miscounted = new Set<string>();
    for (const [organizationId, quota] of evictionQuotas(usage, total - maxBytes)) {
      let freed = 0;
      // Its stored entries first, the oldest first...
      while (freed < quota && rounds++ < MAX_EVICTION_ROUNDS) {
        const oldest = await trx
          .selectFrom('cache_entries')
          .select(['key', 'size'])
          .where('organization_id', '=', organizationId)
          .orderBy('created_at')
          .orderBy('key')
          .limit(BATCH)
          .execute();
        if (oldest.length === 0) {
          // Counted more than it holds (a row removed behind the cache's back): counted again below.
          miscounted.add(organizationId);
          break;
        }
        const keys: string[] = [];
        for (const row of oldest) {
          if (freed >= quota) break;
          keys.push(row.key);
          freed += Number(row.size);
        }
        const removed = await removeKeys(trx, organizationId, keys);
        add(deltas, organizationId, -removed.bytes);
        outcome.evicted += removed.count;
        left -= removed.bytes;
      }
      // ...then, for a write larger than its organization's share, its own oldest answers, not stored.
      for (const row of byOrganization.get(organizationId) ?? []) {
        if (freed >= quota) break;
        dropped.add(row);
        freed += row.size;
        left -= row.size;
      }
    }
    // Still past the bound (it was lowered, and more went than one write may remove): this write only
    // makes room, and the next ones go on until the store is back under it.
    if (left > maxBytes) for (const row of fitting) dropped.add(row);

    const kept = fitting.filter((row) => !dropped.has(row));
    outcome.skipped += dropped.size;
    for (let i = 0; i < kept.length; i += BATCH)
      await trx
        .insertInto('cache_entries')
        .values(kept.slice(i, i + BATCH))
        .execute();
    for (const row of kept) add(deltas, row.organization_id, row.size);
    outcome.stored = kept.length;
    await applyDeltas(trx, deltas);
    for (const organizationId of miscounted) {
      await trx
        .updateTable('cache_usage')
        .set((eb) => ({
          bytes: eb
            .selectFrom('cache_entries')
            .select((e) => e.fn.coalesce(e.fn.sum<number>('size'), e.lit(0)).as('sum'))
            .where('organization_id', '=', organizationId),
        }))
        .where('organization_id', '=', organizationId)
        .execute();
    }
  });
  return outcome;
}

/**
 * Removes up to BATCH expired entries, counting their bytes off; answers how many went. The caller
 * repeats while a whole batch went.
 */
export async function removeExpiredBatch(db: Kysely<Database>, now: number): Promise<number> {
  return db.transaction().execute(async (trx) => {
    await lockCache(trx);
    const expired = await trx
      .selectFrom('cache_entries')
      .select(['organization_id', 'key'])
      .where('expires_at', '<=', now)
      .orderBy('expires_at')
      .limit(BATCH)
      .execute();
    const byOrganization = new Map<string, string[]>();
    for (const row of expired)
      byOrganization.set(row.organization_id, [...(byOrganization.get(row.organization_id) ?? []), row.key]);
    const deltas = new Map<string, number>();
    let count = 0;
    for (const [organizationId, keys] of byOrganization) {
      const removed = await removeKeys(trx, organizationId, keys);
      add(deltas, organizationId, -removed.bytes);
      count += removed.count;
    }
    await applyDeltas(trx, deltas);
    return count;
  });
}

/** Removes every expired entry, a batch per transaction, while `more()` allows; answers how many went. */
export async function removeExpired(
  db: Kysely<Database>,
  now: number,
  more: () => boolean = () => true,
): Promise<number> {
  let total = 0;
  for (;;) {
    const removed = await removeExpiredBatch(db, now);
    total += removed;
    if (removed < BATCH || !more()) return total;
  }
}

/** Empties an organization's cache; answers how many entries went. */
export async function clearOrganization(db: Kysely<Database>, organizationId: string): Promise<number> {
  return db.transaction().execute(async (trx) => {
    await lockCache(trx);
    const result = await trx
      .deleteFrom('cache_entries')
      .where('organization_id', '=', organizationId)
      .executeTakeFirst();
    await trx.deleteFrom('cache_usage').where('organization_id', '=', organizationId).execute();
    return Number(result.numDeletedRows);
  });
}

/** The cache's stored bytes as counted, by organization. */
export async function cacheUsage(db: Kysely<Database>): Promise<Map<string, number>> {
  const rows = await db.selectFrom('cache_usage').select(['organization_id', 'bytes']).execute();
  return new Map(rows.map((r) => [r.organization_id, Number(r.bytes)]));
}
