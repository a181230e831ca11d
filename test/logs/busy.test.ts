/**
 * Busy is not an error: deletes, metadata patches and scores while batches are being ingested as fast
 * as clients can send them succeed (SQLite once answered "database is locked" with a 500 here).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, startAppWithTenant, type Tenant, type TestApp } from '../support/harness.js';

describe('writes during heavy ingestion', () => {
  let t: TestApp;
  let a: Tenant;
  before(async () => ([t, a] = await startAppWithTenant()));
  after(() => t.close());

  it('never answer 500: deletes, patches and scores succeed while batches stream in', async () => {
    const created = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', {
      key: a.key,
      body: Array.from({ length: 300 }, (_, i) => ({ model: 'target', metadata: { i } })),
    });
    assert.equal(created.status, 201);
    const ids: string[] = created.body.unique_ids;
    const evaluator = await api(t.baseUrl, 'POST', '/api/evaluators/', { key: a.key, body: { name: 'busy' } });
    assert.equal(evaluator.status, 201);

    let ingesting = true;
    const ingestors = Array.from({ length: 4 }, async () => {
      let batches = 0;
      while (ingesting) {
        const res = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', {
          key: a.key,
          body: Array.from({ length: 500 }, () => ({ model: 'stream', metadata: { k: 'v' } })),
        });
        assert.equal(res.status, 201, res.text.slice(0, 200));
        batches += 1;
      }
      return batches;
    });
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++) {
      const id = ids[i];
      const calls = await Promise.all([
        api(t.baseUrl, 'DELETE', `/api/request-logs/${ids[100 + i]}/`, { key: a.key }),
        api(t.baseUrl, 'PATCH', `/api/request-logs/${id}/`, { key: a.key, body: { metadata: { patched: i } } }),
        api(t.baseUrl, 'POST', `/api/logs/${ids[200 + i]}/scores/`, {
          key: a.key,
          body: { evaluator_id: evaluator.body.id, numerical_value: i },
        }),
      ]);
      for (const res of calls) statuses.push(res.status);
    }
    ingesting = false;
    const batches = (await Promise.all(ingestors)).reduce((sum, n) => sum + n, 0);
    assert.ok(batches >= 4, `${batches} batches ingested meanwhile`);
    const unexpected = statuses.filter((s) => ![200, 201, 204].includes(s));
    assert.deepEqual(unexpected, [], `statuses: ${[...new Set(statuses)].join(', ')}`);
  });
});
