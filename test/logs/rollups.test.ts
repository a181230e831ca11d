/**
 * Rollups kept right: after logs are written (late ones among them), deleted by their route, deleted by
 * retention, and added by the job that fills rollups for logs stored before they existed, every rollup
 * row (of both tables: log_rollups, log_customer_rollups) is what its logs add up to — worked out here
 * from the logs, one at a time — and a summary by customer read from the customer rollups is the logs'
 * own, on the database GATELOG_TEST_DB names.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { deleteLogsBefore } from '../../src/retention/log-removal.js';
import { backfillStep } from '../../src/logs/rollups/rollup-backfill.js';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';
import { assertRollupsMatch } from '../support/rollup-check.js';

const HOUR = 3_600_000;
const DAY = 86_400_000;

describe('rollups', () => {
  let t: TestApp;
  let a: Tenant;
  const now = Date.now();
  before(async () => {
    t = await startApp();
    a = await t.tenant();
  });
  after(async () => t.close());

  const ingest = async (count: number, ageMs: (i: number) => number) => {
    const logs = Array.from({ length: count }, (_, i) => ({
      model: ['gpt-4o', 'gpt-4o-mini', 'claude-sonnet'][i % 3],
      customer_identifier: ['acme', 'globex', 'initech', 'umbrella', 'hooli', ''][i % 6],
      log_type: i % 5 === 0 ? 'embedding' : 'chat',
      status_code: i % 7 === 0 ? 500 : 200,
      environment: i % 4 === 0 ? 'staging' : 'prod',
      prompt_tokens: 10 + i,
      completion_tokens: i % 9,
      cost: 0.001 * (i % 13),
      latency: 0.05 + (i % 17) * 0.37,
      time_to_first_token: i % 2 === 0 ? null : 0.01 * (1 + (i % 11)),
      input: [{ role: 'user', content: `question ${i}` }],
      output: { role: 'assistant', content: `answer ${i}` },
      timestamp: new Date(now - ageMs(i)).toISOString(),
    }));
    const res = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', { key: a.key, body: logs });
    assert.equal(res.status, 201, res.text);
    await t.flush();
    return res.body.unique_ids as string[];
  };

  /** Summaries by customer over the last 12 days: from the customer rollups, equal to the logs' own. */
  const customersAgree = async (what: string) => {
    const metrics = [
      { agg: 'count' },
      { agg: 'error_rate' },
      { field: 'cost', agg: 'sum' },
      { field: 'latency', agg: 'sum' },
      { field: 'latency', agg: 'count' },
      { field: 'prompt_tokens', agg: 'sum' },
      { field: 'completion_tokens', agg: 'avg' },
    ];
    const bodies = [
      {},
      // As the dashboard asks: model calls only.
      { filters: { log_type: { operator: 'in', value: ['chat', 'completion', 'response'] } } },
      { environment: 'staging', bucket: '1d' },
    ];
    for (const extra of bodies) {
      const body = {
        start_time: new Date(now - 12 * DAY).toISOString(),
        end_time: new Date(now + 1000).toISOString(),
        group_by: ['customer_identifier'],
        limit: 3,
        metrics,
        ...extra,
      };
      const ask = (exact: boolean) =>
        api(t.baseUrl, 'POST', '/api/request-logs/summary/', { key: a.key, body: { ...body, exact } });
      const [rolled, exact] = await Promise.all([ask(false), ask(true)]);
      assert.equal(rolled.status, 200, rolled.text);
      assert.equal(exact.status, 200, exact.text);
      const where = `${what} ${JSON.stringify(extra)}`;
      assert.equal(rolled.body.source, 'rollups', where);
      assert.equal(rolled.body.approximate, false, where);
      assert.equal(exact.body.source, 'logs', where);
      const close = (x: unknown, y: unknown) =>
        typeof x === 'number' && typeof y === 'number' ? Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(y)) : x === y;
      const same = (x: unknown, y: unknown): boolean =>
        Array.isArray(x) && Array.isArray(y)
          ? x.length === y.length && x.every((v, i) => same(v, y[i]))
          : x !== null && typeof x === 'object' && y !== null && typeof y === 'object'
            ? same(Object.entries(x), Object.entries(y))
            : close(x, y);
      assert.ok(
        same(
          [rolled.body.series, rolled.body.totals, rolled.body.buckets],
          [exact.body.series, exact.body.totals, exact.body.buckets],
        ),
        `${where}: ${JSON.stringify(rolled.body.series)} against ${JSON.stringify(exact.body.series)}`,
      );
    }
  };

  it('holds what the logs add up to, late logs in their past buckets', async () => {
    await ingest(120, (i) => (i % 40) * 37_000); // the last 25 minutes
    await customersAgree('written');
    await ingest(60, (i) => 3 * DAY + i * 5 * 60_000); // late: three days ago, over five hours
    await assertRollupsMatch(t.db.db, a.org.id);
    await customersAgree('late logs');
  });

  it('gives back a deleted log’s share, and drops the rows left without a log', async () => {
    const [only] = await ingest(1, () => 10 * DAY);
    await assertRollupsMatch(t.db.db, a.org.id);
    const res = await api(t.baseUrl, 'DELETE', `/api/request-logs/${only}/`, { key: a.key });
    assert.equal(res.status, 204, res.text);
    await assertRollupsMatch(t.db.db, a.org.id);
    await customersAgree('a log deleted');
    const left = await t.db.db
      .selectFrom('log_rollups')
      .select(sql<number>`count(*)`.as('n'))
      .where('organization_id', '=', a.org.id)
      .where('bucket_start', '<', now - 9 * DAY)
      .executeTakeFirstOrThrow();
    assert.equal(Number(left.n), 0);
  });

  it('gives back the share of logs retention deletes', async () => {
    await deleteLogsBefore(t.db.db, a.org.id, now - 3 * DAY - 2 * HOUR, 1000);
    await assertRollupsMatch(t.db.db, a.org.id);
    await customersAgree('retention');
  });

  it('adds the logs stored before rollups existed, those deleted meanwhile left out', async () => {
    // As a database from before rollups: none for its logs, every id noted for the job, for both tables.
    await t.db.db.deleteFrom('log_rollups').execute();
    await t.db.db.deleteFrom('log_customer_rollups').execute();
    const ids = await t.db.db
      .selectFrom('logs')
      .select([sql<number>`min(id)`.as('lo'), sql<number>`max(id)`.as('hi')])
      .executeTakeFirstOrThrow();
    await t.db.db
      .insertInto('rollup_backfill')
      .values([
        { id: 1, next_id: Number(ids.lo), last_id: Number(ids.hi) },
        { id: 2, next_id: Number(ids.lo), last_id: Number(ids.hi) },
      ])
      .execute();
    // A noted log deleted before the job reaches it takes nothing away.
    const list = await api(t.baseUrl, 'GET', '/api/request-logs/?page_size=1', { key: a.key });
    const res = await api(t.baseUrl, 'DELETE', `/api/request-logs/${list.body.results[0].unique_id}/`, {
      key: a.key,
    });
    assert.equal(res.status, 204, res.text);
    while (await backfillStep(t.db.db, 50));
    const left = await t.db.db.selectFrom('rollup_backfill').selectAll().execute();
    assert.deepEqual(left, []);
    await assertRollupsMatch(t.db.db, a.org.id);
    await customersAgree('added by the job');
    // And from then on, logs written and deleted keep them right.
    await ingest(30, (i) => i * 1000);
    await assertRollupsMatch(t.db.db, a.org.id);
    await customersAgree('written after the job');
  });
});
