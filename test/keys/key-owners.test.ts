/**
 * Keys' owners for whoever reads logs (docs/api.md "Keys": GET /api/keys/owners/): each key that has an
 * owner, by the name its logs carry — how the dashboard reads its top keys as developers. Scope `read`;
 * another organization's keys never show.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';

describe("keys' owners", () => {
  let t: TestApp;
  let a: Tenant;
  let b: Tenant;
  const call = (key: string, method: string, path: string, body?: unknown) =>
    api(t.baseUrl, method, path, { key, body });
  const makeKey = async (by: Tenant, body: Record<string, unknown>) => {
    const made = await call(by.key, 'POST', '/api/keys/', body);
    assert.equal(made.status, 201, made.text);
    return made.body as { id: string; key: string };
  };
  let reader: { id: string; key: string };
  let caller: { id: string; key: string };

  before(async () => {
    t = await startApp();
    a = await t.tenant();
    b = await t.tenant();
    reader = await makeKey(a, { name: 'reader', scopes: ['read'] });
    caller = await makeKey(a, { name: 'caller', scopes: ['models'] });
    await makeKey(a, { name: 'dev-7', scopes: ['models'], owner: { email: 'dev-7@example.com', first_name: 'Seven' } });
    await makeKey(a, { name: 'dev-8', scopes: ['models'], owner: { last_name: 'Eight' } });
    await makeKey(b, { name: 'other-org-dev', scopes: ['models'], owner: { email: 'other@example.com' } });
  });
  after(() => t?.close());

  it('lists each owned key of the organization by name, to a key that reads logs', async () => {
    const res = await call(reader.key, 'GET', '/api/keys/owners/');
    assert.equal(res.status, 200, res.text);
    const results = (res.body.results as { name: string }[]).sort((x, y) => x.name.localeCompare(y.name));
    assert.deepEqual(results, [
      { name: 'dev-7', owner: { email: 'dev-7@example.com', first_name: 'Seven', last_name: '' } },
      { name: 'dev-8', owner: { email: '', first_name: '', last_name: 'Eight' } },
    ]);
  });

  it('follows a change of owner, and a key whose owner is cleared leaves the list', async () => {
    const seven = (await call(a.key, 'GET', '/api/keys/?page_size=100')).body.results.find(
      (k: { name: string }) => k.name === 'dev-7',
    ) as { id: string };
    const cleared = await call(a.key, 'PATCH', `/api/keys/${seven.id}/`, {
      owner: { email: '', first_name: '', last_name: '' },
    });
    assert.equal(cleared.status, 200, cleared.text);
    const res = await call(reader.key, 'GET', '/api/keys/owners/');
    assert.deepEqual(
      (res.body.results as { name: string }[]).map((r) => r.name),
      ['dev-8'],
    );
  });

  it('refuses a key without the read scope', async () => {
    const res = await call(caller.key, 'GET', '/api/keys/owners/');
    assert.equal(res.status, 403, res.text);
    assert.equal(res.body.error.code, 'permission_denied');
  });

  it("never shows another organization's keys", async () => {
    const res = await call(b.key, 'GET', '/api/keys/owners/');
    assert.deepEqual(
      (res.body.results as { name: string }[]).map((r) => r.name),
      ['other-org-dev'],
    );
  });
});
