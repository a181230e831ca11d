/** What a new user tripped over (wrong results, unclear answers), each fixed and kept fixed. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, startAppWithTenant, type Tenant, type TestApp } from '../support/harness.js';

describe('what a new user trips over', () => {
  let t: TestApp;
  let a: Tenant;
  before(async () => ([t, a] = await startAppWithTenant()));
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

  it('prices a chat log by its model; an unpriced model (cost null) matches cost 0 in filters, as documented', async () => {
    const tenant = await t.tenant();
    const create = (body: object) => api(t.baseUrl, 'POST', '/api/request-logs/create/', { key: tenant.key, body });
    // The README's example: a chat log with tokens and no cost.
    const chat = await create({ model: 'gpt-4o-mini', prompt_tokens: 1000, completion_tokens: 500 });
    await create({ model: 'my-finetune-x', prompt_tokens: 1000, completion_tokens: 500 });
    await create({ model: 'my-finetune-x', prompt_tokens: 10, status_code: 500 });
    const item = await api(t.baseUrl, 'GET', `/api/request-logs/${chat.body.unique_id}/`, { key: tenant.key });
    assert.equal(item.body.cost, 0.00045);
    // docs/api.md: successful calls that cost 0 are those of unpriced (or free) models.
    const unpriced = await api(t.baseUrl, 'POST', '/api/request-logs/list/', {
      key: tenant.key,
      body: { filters: { cost: { operator: '', value: [0] }, status_code: { operator: 'lt', value: [400] } } },
    });
    assert.deepEqual(
      unpriced.body.results.map((r: { model: string; prompt_tokens: number }) => [r.model, r.prompt_tokens]),
      [['my-finetune-x', 1000]],
    );
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
