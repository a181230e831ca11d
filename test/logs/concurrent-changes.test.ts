/**
 * A stored log patched and deleted at the same moment, and deleted twice at once, over real HTTP on the
 * database GATELOG_TEST_DB names: every call answers (200, 204 or 404 — never a 503 from a deadlock on
 * PostgreSQL), and the facet counts and rollups afterwards are what the logs left make — a log's share
 * taken away once, however many deletions raced for it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';
import { assertRollupsMatch } from '../support/rollup-check.js';

describe('a log changed by several calls at once', () => {
  let t: TestApp;
  let a: Tenant;
  const LOGS = 24;
  let ids: string[] = [];

  before(async () => {
    t = await startApp();
    a = await t.tenant();
    const logs = Array.from({ length: LOGS }, (_, i) => ({
      model: ['gpt-4o', 'gpt-4o-mini'][i % 2],
      customer_identifier: `c${i % 3}`,
      latency: 0.1 + i / 100,
      metadata: { team: ['a', 'b'][i % 2], plan: 'pro' },
    }));
    const res = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', { key: a.key, body: { logs } });
    assert.equal(res.status, 201, res.text);
    ids = res.body.unique_ids as string[];
    await t.flush();
  });
  after(() => t.close());

  it('answers every patch and deletion, and takes each deleted log’s share away once', async () => {
    // Each log of the first half: patched and deleted twice, at once; the second half patched only.
    const calls = ids.flatMap((id, i) => {
      const patch = () =>
        api(t.baseUrl, 'PATCH', `/api/request-logs/${id}/`, { key: a.key, body: { metadata: { team: 'z' } } });
      const remove = () => api(t.baseUrl, 'DELETE', `/api/request-logs/${id}/`, { key: a.key });
      return i < LOGS / 2 ? [patch(), remove(), remove()] : [patch(), patch()];
    });
    const answers = await Promise.all(calls);
    for (const res of answers) assert.ok([200, 204, 404].includes(res.status), `${res.status} ${res.text}`);
    for (const id of ids.slice(0, LOGS / 2)) {
      const gone = await api(t.baseUrl, 'GET', `/api/request-logs/${id}/`, { key: a.key });
      assert.equal(gone.status, 404, gone.text);
    }

    await assertRollupsMatch(t.db.db, a.org.id);
    const facets = await api(t.baseUrl, 'GET', '/api/request-logs/facets/', { key: a.key });
    assert.equal(facets.status, 200, facets.text);
    const choices = (field: string) =>
      Object.fromEntries(
        ((facets.body.filter_options[field]?.value_choices ?? []) as { value: string; count: number }[]).map((c) => [
          c.value,
          c.count,
        ]),
      );
    assert.deepEqual(choices('metadata__team'), { z: LOGS / 2 });
    assert.deepEqual(choices('metadata__plan'), {});
    assert.deepEqual(choices('model'), { 'gpt-4o': LOGS / 4, 'gpt-4o-mini': LOGS / 4 });
  });
});
