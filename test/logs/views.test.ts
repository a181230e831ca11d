/** Saved views: named screens of the web UI, per organization (docs/api.md "Saved views"). */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, startAppWithTwoTenants, type Tenant, type TestApp } from '../support/harness.js';

describe('saved views', () => {
  let t: TestApp;
  let a: Tenant;
  let b: Tenant;
  before(async () => ([t, a, b] = await startAppWithTwoTenants()));
  after(() => t.close());
  const as = (tenant: Tenant) => (method: string, path: string, body?: unknown) =>
    api(t.baseUrl, method, path, { key: tenant.key, body });

  it('saves, lists by name, reads, renames and deletes a view; a name is taken once per organization', async () => {
    const callA = as(a);
    const query = `?range=24h&filters=${encodeURIComponent('[{"field":"model","operator":"","values":["gpt-4o"]}]')}`;
    const created = await callA('POST', '/api/views/', { name: 'Slow gpt-4o', query, columns: ['time', 'latency'] });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.query, query);
    assert.deepEqual(created.body.columns, ['time', 'latency']);
    const other = await callA('POST', '/api/views/', { name: 'All errors', query: '?filters=x' });
    assert.equal(other.status, 201);
    assert.deepEqual(other.body.columns, []);

    const listed = await callA('GET', '/api/views/');
    assert.equal(listed.body.count, 2);
    assert.deepEqual(
      listed.body.results.map((v: { name: string }) => v.name),
      ['All errors', 'Slow gpt-4o'],
    );
    const again = await callA('POST', '/api/views/', { name: 'Slow gpt-4o', query: '' });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.param, 'name');
    // Another organization may use the same name, and sees none of A's views.
    assert.equal((await as(b)('POST', '/api/views/', { name: 'Slow gpt-4o', query: '' })).status, 201);
    assert.equal((await as(b)('GET', '/api/views/')).body.count, 1);
    assert.equal((await as(b)('GET', `/api/views/${created.body.id}/`)).status, 404);
    assert.equal((await as(b)('PATCH', `/api/views/${created.body.id}/`, { name: 'mine now' })).status, 404);
    assert.equal((await as(b)('DELETE', `/api/views/${created.body.id}/`)).status, 404);

    const renamed = await callA('PATCH', `/api/views/${created.body.id}/`, { name: 'Slow 4o', columns: ['cost'] });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.query, query, 'what is not named stays');
    assert.deepEqual(renamed.body.columns, ['cost']);
    assert.equal((await callA('PATCH', `/api/views/${created.body.id}/`, { name: 'All errors' })).status, 409);
    assert.equal((await callA('GET', `/api/views/${created.body.id}/`)).body.name, 'Slow 4o');
    assert.equal((await callA('DELETE', `/api/views/${created.body.id}/`)).status, 204);
    assert.equal((await callA('GET', `/api/views/${created.body.id}/`)).status, 404);
  });

  it('refuses a bad view with a 400 naming the field', async () => {
    const callA = as(a);
    const cases: [unknown, string][] = [
      [{ query: '' }, 'name'],
      [{ name: '   ', query: '' }, 'name'],
      [{ name: 'x'.repeat(201), query: '' }, 'name'],
      [{ name: 'n', query: 'range=1h' }, 'query'],
      [{ name: 'n', query: `?${'a'.repeat(8192)}` }, 'query'],
      [{ name: 'n', query: '', columns: 'time' }, 'columns'],
      [{ name: 'n', query: '', owner: 'someone' }, 'owner'],
    ];
    for (const [body, field] of cases) {
      const res = await callA('POST', '/api/views/', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.match(String(res.body.error.param ?? res.body.error.message), new RegExp(field), res.text);
    }
  });
});
