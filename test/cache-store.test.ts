/**
 * The response cache's store (docs/api.md "Response cache"): bounded by GATELOG_CACHE_MAX_MB with the
 * oldest entries removed first and the expired ones too, on a real database; and a cache that cannot be
 * read or written never fails a call — the call is a miss, the failure counted in /metrics.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ResponseCache } from '../src/cache/response-cache.js';
import { connect } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createOrganization } from '../src/auth/organizations.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { api } from './support/harness.js';
import { logNamedBy, type ProxyTestApp, startProxyApp } from './support/proxy-app.js';

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

  it('removes the oldest entries past its bound, and what expired', async () => {
    let now = 1_000_000;
    // A bound of 10 entries of 1 KB.
    const cache = new ResponseCache(handle.db, 10 * 1024, () => now);
    const body = 'x'.repeat(1024);
    for (let i = 0; i < 15; i++) {
      now += 1000;
      cache.put(org, 'chat', `key-${i}`, body, 3600);
      await cache.settled();
    }
    await cache.maintain();
    const kept = await handle.db.selectFrom('cache_entries').select('key').orderBy('created_at').execute();
    assert.deepEqual(
      kept.map((r) => r.key),
      Array.from({ length: 10 }, (_, i) => `key-${i + 5}`),
      'the five oldest went',
    );
    assert.equal(cache.stats.evicted, 5);
    // An hour and a second later, every entry has expired: reads miss, and the sweep removes them.
    now += 3601 * 1000;
    assert.equal(await cache.get(org, 'key-14'), null);
    await cache.maintain();
    const left = await handle.db.selectFrom('cache_entries').select('key').execute();
    assert.equal(left.length, 0);
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
