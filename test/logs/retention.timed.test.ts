/**
 * The retention sweep never holds requests: /health answers within 200 ms while a sweep deletes tens of
 * thousands of logs; on the database GATELOG_TEST_DB names.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';

const DAY = 86_400_000;
const LOGS = 20_000;

describe('retention sweep under way', () => {
  let t: TestApp;
  let a: Tenant;

  before(async () => {
    t = await startApp({ env: { GATELOG_RETENTION_DAYS: '30', GATELOG_RETENTION_INTERVAL_S: '1' } });
    a = await t.tenant();
    // Kept until the seeding is done, then left to the server's 30 days.
    await api(t.baseUrl, 'PATCH', '/api/settings/', { key: a.key, body: { retention_days: 0 } });
    const old = Date.now() - 40 * DAY;
    for (let at = 0; at < LOGS; at += 1000) {
      const logs = Array.from({ length: 1000 }, (_, i) => ({
        model: `model-${i % 7}`,
        input: [{ role: 'user', content: `question ${at + i}` }],
        output: { role: 'assistant', content: 'an answer of some length '.repeat(8) },
        customer_identifier: `customer-${i % 13}`,
        metadata: { n: String(i % 5) },
        timestamp: new Date(old - at - i).toISOString(),
      }));
      const res = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', { key: a.key, body: logs });
      assert.equal(res.status, 201, res.text);
    }
    await t.flush();
  });
  after(() => t.close());

  it('answers /health within 200 ms while the sweep deletes 20,000 logs', async (ctx) => {
    await api(t.baseUrl, 'PATCH', '/api/settings/', { key: a.key, body: { retention_days: null } });
    const released = Date.now();
    let lastSeen = '';
    let slowest = 0;
    let deleted = 0;
    let runs = 0;
    const until = Date.now() + 120_000;
    while (Date.now() < until) {
      const started = performance.now();
      const health = await api(t.baseUrl, 'GET', '/health');
      slowest = Math.max(slowest, performance.now() - started);
      assert.equal(health.status, 200);
      const report = health.body.retention as { started_at: string; deleted_logs: number; complete: boolean } | null;
      if (report && Date.parse(report.started_at) >= released) {
        if (report.started_at !== lastSeen) {
          lastSeen = report.started_at;
          deleted += report.deleted_logs;
          runs += 1;
          if (report.complete) break;
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    ctx.diagnostic(`${deleted} logs deleted in ${runs} runs; slowest /health ${slowest.toFixed(1)} ms`);
    const left = await api(
      t.baseUrl,
      'GET',
      `/api/request-logs/list/?start_time=${new Date(Date.now() - 60 * DAY).toISOString()}`,
      {
        key: a.key,
      },
    );
    assert.equal(left.body.count, 0, 'every old log went');
    assert.ok(slowest < 200, `slowest /health: ${slowest.toFixed(1)} ms`);
  });
});
