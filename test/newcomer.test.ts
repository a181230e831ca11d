/** What a new user tripped over (wrong results, unclear answers), each fixed and kept fixed. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, startApp, type Tenant, type TestApp } from './support/harness.js';

describe('what a new user trips over', () => {
  let t: TestApp;
  let a: Tenant;
  before(async () => {
    t = await startApp();
    a = await t.tenant();
  });
  after(() => t.close());

  it('keeps a cost the caller gives, whatever the status; a computed one is 0 for a failed call', async () => {
    const given = await api(t.baseUrl, 'POST', '/api/request-logs/create/', {
      key: a.key,
      body: { model: 'text-embedding-3-small', status_code: 429, cost: 0.25, prompt_tokens: 1000 },
    });
    const computed = await api(t.baseUrl, 'POST', '/api/request-logs/create/', {
      key: a.key,
      body: { model: 'text-embedding-3-small', status_code: 500, prompt_tokens: 1000 },
    });
    const ok = await api(t.baseUrl, 'POST', '/api/request-logs/create/', {
      key: a.key,
      body: { model: 'text-embedding-3-small', prompt_tokens: 1_000_000 },
    });
    const cost = async (id: string) =>
      (await api(t.baseUrl, 'GET', `/api/request-logs/${id}/`, { key: a.key })).body.cost;
    assert.equal(await cost(given.body.unique_id), 0.25);
    assert.equal(await cost(computed.body.unique_id), 0);
    assert.equal(await cost(ok.body.unique_id), 0.02);
  });

  it('names a body filter key other than operator and value', async () => {
    const res = await api(t.baseUrl, 'POST', '/api/request-logs/list/', {
      key: a.key,
      body: { filters: { model: { operator: '', value: ['x'], connector: 'OR' } } },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'filters.model.connector');
  });

  it('says that JSON is expected when the content type is not', async () => {
    const res = await api(t.baseUrl, 'POST', '/api/request-logs/create/', {
      key: a.key,
      body: '<log model="x"/>',
      headers: { 'content-type': 'application/xml' },
    });
    assert.equal(res.status, 415);
    assert.match(res.body.error.message, /application\/json/);
  });
});
