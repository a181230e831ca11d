/**
 * A log accepted on SQLite is accepted on PostgreSQL: what either database would refuse is refused at
 * the API edge with a 400 naming the field, and what is accepted is stored, read and filtered.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, startAppWithTenant, type Tenant, type TestApp } from '../support/harness.js';

describe('logs every database can store', () => {
  let t: TestApp;
  let a: Tenant;
  before(async () => ([t, a] = await startAppWithTenant()));
  after(() => t.close());

  const create = (body: unknown) => api(t.baseUrl, 'POST', '/api/request-logs/create/', { key: a.key, body });

  it('refuses text too long to index, numbers out of range, naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ model: 'm'.repeat(3000) }, 'model'],
      [{ provider_id: 'p'.repeat(3000) }, 'provider_id'],
      [{ metadata: { k: 'v'.repeat(3000) } }, 'metadata.k'],
      [{ metadata: { k: { nested: 'x'.repeat(2000) } } }, 'metadata.k'],
      [{ metadata: { ['k'.repeat(300)]: 1 } }, `metadata.${'k'.repeat(40)}`],
      [{ prompt_tokens: 2 ** 31 }, 'prompt_tokens'],
      [{ latency: 1e300 }, 'latency'],
    ];
    for (const [body, param] of cases) {
      const res = await create(body);
      assert.equal(res.status, 400, JSON.stringify(body).slice(0, 60));
      assert.equal(res.body.error.param, param);
    }
    const batch = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', {
      key: a.key,
      body: { logs: [{ model: 'fine' }, { metadata: { k: '東'.repeat(400) } }] },
    });
    assert.equal(batch.status, 400);
    assert.equal(batch.body.error.param, 'logs.1.metadata.k');
    const embeddings = await api(t.baseUrl, 'POST', '/api/embeddings', {
      key: a.key,
      body: { model: 'text-embedding-3-small', input: 'x', metadata: { k: 'v'.repeat(3000) } },
    });
    assert.equal(embeddings.status, 400);
    assert.equal(embeddings.body.error.param, 'metadata.k');
  });

  it('stores, reads and filters values at the limits, on both databases', async () => {
    const model = '東'.repeat(170);
    const value = '🙂'.repeat(256);
    const res = await create({
      model,
      provider_id: 'p'.repeat(512),
      metadata: { k: value },
      prompt_tokens: 2 ** 31 - 1,
    });
    assert.equal(res.status, 201, res.text.slice(0, 200));
    const one = await api(t.baseUrl, 'GET', `/api/request-logs/${res.body.unique_id}/`, { key: a.key });
    assert.equal(one.body.model, model);
    assert.equal(one.body.prompt_tokens, 2 ** 31 - 1);
    const filtered = await api(t.baseUrl, 'POST', '/api/request-logs/list/', {
      key: a.key,
      body: { filters: { metadata__k: { operator: '', value: [value] }, model: { operator: '', value: [model] } } },
    });
    assert.equal(filtered.status, 200);
    assert.equal(filtered.body.count, 1);
    const options = await api(t.baseUrl, 'GET', '/api/request-logs/list/?fetch_filters=true', { key: a.key });
    assert.equal(options.status, 200);
  });
});
