import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, startApp, startAppWithTenant, type Tenant, type TestApp } from '../support/harness.js';

describe('batch ingestion and the minimal list', () => {
  let t: TestApp;
  let a: Tenant;
  const list = (query = '', key = a.key) => api(t.baseUrl, 'GET', `/api/request-logs/list/${query}`, { key });

  before(async () => ([t, a] = await startAppWithTenant()));
  after(() => t.close());

  it('ingests a batch given as {logs} or as a bare array', async () => {
    const res = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', {
      key: a.key,
      body: { logs: [{ model: 'm1' }, { model: 'm2' }] },
    });
    assert.equal(res.status, 201);
    assert.equal(res.body.ingested_count, 2);
    assert.equal(res.body.unique_ids.length, 2);
    const bare = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', { key: a.key, body: [{ model: 'm3' }] });
    assert.equal(bare.status, 201);
    assert.equal(bare.body.ingested_count, 1);
    await t.flush();
    const got = await api(t.baseUrl, 'GET', `/api/request-logs/${res.body.unique_ids[1]}/`, { key: a.key });
    assert.equal(got.body.model, 'm2');
  });

  it('is all-or-nothing: one invalid log stores none and names its index', async () => {
    const before = (await list()).body.count;
    const res = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', {
      key: a.key,
      body: { logs: [{ model: 'ok' }, { model: 'ok' }, { cost: 'x' }] },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'logs.2.cost');
    const bare = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', { key: a.key, body: [{}, 'nope'] });
    assert.equal(bare.status, 400);
    assert.equal(bare.body.error.param, '1');
    const tooMany = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', {
      key: a.key,
      body: Array.from({ length: 1001 }, () => ({})),
    });
    assert.equal(tooMany.status, 400);
    assert.match(tooMany.body.detail, /at most 1000/);
    for (const body of [{}, { logs: [] }, { logs: 'x' }]) {
      const r = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', { key: a.key, body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error.param, 'logs');
    }
    await t.flush();
    assert.equal((await list()).body.count, before);
  });

  it('accepts 1000 logs in one batch', async () => {
    const b = await t.tenant();
    const res = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', {
      key: b.key,
      body: Array.from({ length: 1000 }, (_, i) => ({ model: `m${i % 7}`, metadata: { i } })),
    });
    assert.equal(res.status, 201);
    await t.flush();
    assert.equal((await list('?page_size=1', b.key)).body.count, 1000);
  });

  it('shows a log in the list within a second, without an explicit flush', async () => {
    const b = await t.tenant();
    const res = await api(t.baseUrl, 'POST', '/api/request-logs/create/', { key: b.key, body: { model: 'fast' } });
    const deadline = Date.now() + 1000;
    let found = false;
    while (!found && Date.now() < deadline) {
      found = (await list('', b.key)).body.results.some(
        (r: { unique_id: string }) => r.unique_id === res.body.unique_id,
      );
      if (!found) await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(found);
  });

  it('dispatches POST /api/request-logs/ to list or create by its body', async () => {
    const b = await t.tenant();
    const created = await api(t.baseUrl, 'POST', '/api/request-logs/', { key: b.key, body: { model: 'via-root' } });
    assert.equal(created.status, 201);
    assert.ok(created.body.unique_id);
    await t.flush();
    const listed = await api(t.baseUrl, 'POST', '/api/request-logs/', { key: b.key, body: { filters: {} } });
    assert.equal(listed.status, 200);
    assert.equal(listed.body.count, 1);
    assert.equal(listed.body.results[0].model, 'via-root');
    const getRoot = await api(t.baseUrl, 'GET', '/api/request-logs/', { key: b.key });
    assert.equal(getRoot.body.count, 1);
  });

  it('lists the last hour of production logs, newest first, with paging links', async () => {
    const b = await t.tenant();
    const testKey = await t.tenant({ isTest: true });
    const old = new Date(Date.now() - 2 * 3600_000).toISOString();
    await api(t.baseUrl, 'POST', '/api/request-logs/batch/', {
      key: b.key,
      body: [{ model: 'old', timestamp: old }, ...Array.from({ length: 5 }, (_, i) => ({ model: `new${i}` }))],
    });
    await api(t.baseUrl, 'POST', '/api/request-logs/create/', { key: testKey.key, body: { model: 'test' } });
    await t.flush();

    const first = await list('?page_size=2', b.key);
    assert.equal(first.status, 200);
    assert.equal(first.body.count, 5);
    assert.deepEqual(
      first.body.results.map((r: { model: string }) => r.model),
      ['new4', 'new3'],
    );
    assert.equal(first.body.previous, null);
    const next = new URL(first.body.next);
    assert.equal(next.origin, t.baseUrl);
    assert.equal(next.pathname, '/api/request-logs/list/');
    assert.equal(next.searchParams.get('page'), '2');
    assert.equal(next.searchParams.get('page_size'), '2');

    const second = await api(t.baseUrl, 'GET', `${next.pathname}${next.search}`, { key: b.key });
    assert.deepEqual(
      second.body.results.map((r: { model: string }) => r.model),
      ['new2', 'new1'],
    );
    assert.equal(new URL(second.body.previous).searchParams.get('page'), '1');
    const third = await list('?page_size=2&page=3', b.key);
    assert.equal(third.body.next, null);
    assert.equal(third.body.results.length, 1);
    const past = await list('?page_size=2&page=9', b.key);
    assert.equal(past.status, 200);
    assert.deepEqual(past.body.results, []);

    const withOld = await list(`?start_time=${encodeURIComponent(old)}`, b.key);
    assert.equal(withOld.body.count, 6);
    const clamped = await list('?page_size=5000', b.key);
    assert.equal(clamped.status, 200);
    assert.equal(clamped.body.results.length, 5);
    assert.equal((await list('', testKey.key)).body.count, 0, 'test logs are not production logs');
    assert.equal((await list('?is_test=true', testKey.key)).body.count, 1);
    assert.equal((await list('?all_envs=true', testKey.key)).body.count, 1);
  });

  it('rejects bad list parameters', async () => {
    for (const [query, param] of [
      ['?page=0', 'page'],
      ['?page_size=abc', 'page_size'],
      ['?start_time=yesterday', 'start_time'],
      ['?start_time=2026-01-02T00:00:00Z&end_time=2026-01-01T00:00:00Z', 'start_time'],
      ['?is_test=maybe', 'is_test'],
    ]) {
      const res = await list(query);
      assert.equal(res.status, 400, query);
      assert.equal(res.body.error.param, param, query);
    }
  });
});

describe('paging links behind a proxy', () => {
  it('builds next/previous from GATELOG_PUBLIC_URL when it is set', async () => {
    const t = await startApp({ env: { GATELOG_PUBLIC_URL: 'https://logs.example.test/base/' } });
    try {
      const a = await t.tenant();
      await api(t.baseUrl, 'POST', '/api/request-logs/batch/', { key: a.key, body: [{}, {}, {}] });
      await t.flush();
      const first = await api(t.baseUrl, 'GET', '/api/request-logs/list/?page_size=1&page=2', { key: a.key });
      assert.equal(first.body.next, 'https://logs.example.test/base/api/request-logs/list/?page_size=1&page=3');
      assert.equal(first.body.previous, 'https://logs.example.test/base/api/request-logs/list/?page_size=1&page=1');
    } finally {
      await t.close();
    }
  });
});
