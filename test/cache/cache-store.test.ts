/**
 * The response cache's store (docs/api.md "Response cache"): bounded by GATELOG_CACHE_MAX_MB with the
 * oldest entries removed first and the expired ones too, on a real database; and a cache that cannot be
 * read or written never fails a call — the call is a miss, the failure counted in /metrics.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { cacheUsage } from '../../src/cache/cache-store.js';
import { ResponseCache } from '../../src/cache/response-cache.js';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createOrganization } from '../../src/auth/organizations.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { api } from '../support/harness.js';
import { logNamedBy, type ProxyTestApp, startProxyApp } from '../support/proxy-app.js';

describe('the cache store', () => {
  let database: TestDatabase;
  let handle: ReturnType<typeof connect>;
  let org: string;

  before(async () => {
    database = await createTestDatabase();
    handle = connect(database.target);
    await migrateToLatest(handle.db);
    org = (await createOrganization(handle.db, 'cache-store')).id;
  });
  after(async () => {
    await handle.close();
    await database.drop();
  });

  /** The bytes stored, read from the entries themselves, and as counted by organization. */
  const stored = async () => {
    const rows = await handle.db
      .selectFrom('cache_entries')
      .select((eb) => ['organization_id', eb.fn.sum<number>('size').as('bytes')])
      .groupBy('organization_id')
      .execute();
    const actual = new Map(rows.map((r) => [r.organization_id, Number(r.bytes)]));
    const counted = new Map([...(await cacheUsage(handle.db))].filter(([, bytes]) => bytes > 0));
    assert.deepEqual(counted, actual, 'the counted bytes are the stored bytes');
    return { total: [...actual.values()].reduce((a, b) => a + b, 0), byOrg: actual };
  };
  const keysOf = async (organizationId: string) =>
    (
      await handle.db
        .selectFrom('cache_entries')
        .select('key')
        .where('organization_id', '=', organizationId)
        .orderBy('created_at')
        .orderBy('key')
        .execute()
    ).map((r) => r.key);

  it('removes the oldest entries as it writes past its bound, and what expired', async () => {
    let now = 1_000_000;
    // A bound of 10 entries of 1 KB.
    const cache = new ResponseCache(handle.db, 10 * 1024, () => now);
    const body = 'x'.repeat(1024);
    for (let i = 0; i < 15; i++) {
      now += 1000;
      cache.put(org, 'chat', `key-${i}`, body, 3600);
      await cache.settled();
      assert.ok((await stored()).total <= 10 * 1024, `within the bound after write ${i}`);
    }
    assert.deepEqual(
      await keysOf(org),
      Array.from({ length: 10 }, (_, i) => `key-${i + 5}`),
      'the five oldest went',
    );
    assert.equal(cache.stats.evicted, 5);
    // The same key written again replaces its entry: its bytes are counted once.
    cache.put(org, 'chat', 'key-14', 'y'.repeat(512), 3600);
    await cache.settled();
    assert.equal((await stored()).total, 9 * 1024 + 512);
    // An answer larger than the whole bound is not stored, and evicts nothing.
    cache.put(org, 'chat', 'too-large', 'z'.repeat(10 * 1024 + 1), 3600);
    await cache.settled();
    assert.equal(cache.stats.skipped, 1);
    assert.equal((await keysOf(org)).length, 10);
    // Rows removed behind the cache's back: a write that finds less to evict than counted counts the
    // organization again (that write itself is dropped: the room it was counted against was not there).
    await handle.db.deleteFrom('cache_entries').where('organization_id', '=', org).execute();
    cache.put(org, 'chat', 'key-15', body, 3600);
    await cache.settled();
    for (let i = 16; i < 20; i++) cache.put(org, 'chat', `key-${i}`, body, 3600);
    await cache.settled();
    assert.deepEqual(await keysOf(org), ['key-16', 'key-17', 'key-18', 'key-19']);
    // A lower bound (a restart with a smaller GATELOG_CACHE_MAX_MB): the next write brings the store under it.
    const smaller = new ResponseCache(handle.db, 2 * 1024, () => now);
    smaller.put(org, 'chat', 'key-20', body, 3600);
    await smaller.settled();
    assert.deepEqual(await keysOf(org), ['key-19', 'key-20']);
    assert.equal((await stored()).total, 2 * 1024);
    // An hour and a second later, every entry has expired: reads miss, and the sweep removes them.
    now += 3601 * 1000;
    assert.equal(await cache.get(org, 'key-14'), null);
    await cache.maintain();
    assert.equal((await keysOf(org)).length, 0);
    assert.equal((await stored()).total, 0);
  });

  it('evicts from the organization holding the most, down to a level both share', async () => {
    const big = (await createOrganization(handle.db, 'cache-store-big')).id;
    const small = (await createOrganization(handle.db, 'cache-store-small')).id;
    let now = 5_000_000;
    const cache = new ResponseCache(handle.db, 20 * 1024, () => now);
    const body = 'x'.repeat(1024);
    // The small organization's 3 entries are older than anything the big one writes.
    for (let i = 0; i < 3; i++) cache.put(small, 'chat', `small-${i}`, body, 3600);
    await cache.settled();
    // A burst of 40 entries (twice the bound) in one go, then one at a time.
    now += 1000;
    cache.putMany(
      big,
      'chat',
      Array.from({ length: 30 }, (_, i) => ({ key: `big-${String(i).padStart(2, '0')}`, body })),
      3600,
    );
    for (let i = 30; i < 40; i++) {
      now += 1000;
      cache.put(big, 'chat', `big-${i}`, body, 3600);
    }
    await cache.settled();
    const after = await stored();
    assert.equal(after.total, 20 * 1024, 'full, and not past it');
    assert.equal(cache.stats.skipped, 13, 'the burst dropped its own oldest answers');
    assert.deepEqual(await keysOf(small), ['small-0', 'small-1', 'small-2'], "the small organization's entries stay");
    assert.deepEqual(
      await keysOf(big),
      Array.from({ length: 17 }, (_, i) => `big-${i + 23}`),
      "the burst's own oldest went",
    );

    // Both past their half: a third organization's writes take from the two down to a level they share.
    const third = (await createOrganization(handle.db, 'cache-store-third')).id;
    await handle.db.deleteFrom('cache_entries').where('organization_id', '=', small).execute();
    await handle.db.deleteFrom('cache_usage').where('organization_id', '=', small).execute();
    for (let i = 0; i < 3; i++) cache.put(small, 'chat', `small-again-${i}`, body, 3600);
    await cache.settled();
    now += 1000;
    cache.putMany(
      third,
      'chat',
      Array.from({ length: 12 }, (_, i) => ({ key: `third-${i}`, body })),
      3600,
    );
    await cache.settled();
    // 32 KB for 20: 12 KB go, taken above the level where they are found — 8.5 KB: the big one's 17 KB
    // and the third's 12 KB come down to it (whole entries: 8 KB each), the small one's 3 KB are below it.
    const shared = await stored();
    assert.deepEqual(
      [shared.byOrg.get(big), shared.byOrg.get(third), shared.byOrg.get(small)],
      [8 * 1024, 8 * 1024, 3 * 1024],
    );
    assert.deepEqual(await keysOf(third), [
      'third-10',
      'third-11',
      'third-4',
      'third-5',
      'third-6',
      'third-7',
      'third-8',
      'third-9',
    ]);
  });
});

describe('a broken cache', () => {
  let p: ProxyTestApp;
  before(async () => {
    p = await startProxyApp();
  });
  after(async () => {
    await p?.close();
  });

  it('is a miss: the call is answered from the provider, and the failure counted', async () => {
    await sql`drop table cache_entries`.execute(p.t.db.db);
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'still answered' }], cache_enabled: true };
    for (let i = 0; i < 2; i++) {
      const res = await api(p.t.baseUrl, 'POST', '/api/chat/completions', { key: p.a.key, body });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers.get('x-gatelog-cache'), 'MISS');
      const log = await logNamedBy(p, res.headers.get('x-gatelog-log-id'));
      assert.equal(log.status_code, 200);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    const metrics = await fetch(`${p.t.baseUrl}/metrics`).then((r) => r.text());
    const errors = /gatelog_cache_errors_total (\d+)/.exec(metrics);
    assert.ok(errors && Number(errors[1]) >= 3, `cache errors counted: ${errors?.[0]}`);
  });
});
