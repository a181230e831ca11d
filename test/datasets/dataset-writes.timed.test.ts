/**
 * Copying many logs into a dataset does not hold the event loop: on SQLite it runs on the bulk-write
 * thread (src/db/sqlite-bulk-dialect.ts), and /health keeps answering meanwhile.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';
import { whilePolling, stallBoundMs } from '../support/responsive.js';

const LOGS = 40_000;

describe('large dataset writes', () => {
  let t: TestApp;
  let a: Tenant;
  const start = new Date(Date.now() - 3600_000).toISOString();

  before(async () => {
    t = await startApp();
    a = await t.tenant();
    const metadata = (i: number) =>
      Object.fromEntries(['a', 'b', 'c', 'd', 'e'].map((k, j) => [k, String((i * (j + 3)) % 17)]));
    const batch = Array.from({ length: 1000 }, (_, i) => ({ model: `m-${i % 7}`, metadata: metadata(i) }));
    for (let done = 0; done < LOGS; done += batch.length) {
      const res = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', { key: a.key, body: { logs: batch } });
      assert.equal(res.status, 201);
    }
  });
  after(() => t.close());

  it('keeps /health answering while a dataset is created from 40,000 logs, and while they are removed', async () => {
    const create = await whilePolling(t.baseUrl, async () => {
      const started = performance.now();
      const res = await api(t.baseUrl, 'POST', '/api/datasets/', {
        key: a.key,
        body: { name: 'big', start_time: start },
      });
      return { res, ms: performance.now() - started };
    });
    assert.equal(create.result.res.status, 201, create.result.res.text);
    assert.equal(create.result.res.body.log_count, LOGS);
    assert.ok(
      create.slowestMs < stallBoundMs(),
      `/health took ${create.slowestMs.toFixed(0)} ms while the copy took ${create.result.ms.toFixed(0)} ms`,
    );
    const id = create.result.res.body.id as string;
    const remove = await whilePolling(t.baseUrl, () =>
      api(t.baseUrl, 'DELETE', `/api/datasets/${id}/logs/delete/`, {
        key: a.key,
        body: { is_deleting_all_logs: true },
      }),
    );
    assert.deepEqual(remove.result.body, { removed_count: LOGS });
    assert.ok(
      remove.slowestMs < stallBoundMs(),
      `/health took ${remove.slowestMs.toFixed(0)} ms while the logs were removed`,
    );
  });
});
