/**
 * Rollups kept right: after logs are written (late ones among them), deleted by their route, deleted by
 * retention, and added by the job that fills rollups for logs stored before they existed, every rollup
 * row is what its logs add up to — worked out here from the logs, one at a time — on the database
 * GATELOG_TEST_DB names.
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

  it('holds what the logs add up to, late logs in their past buckets', async () => {
    await ingest(120, (i) => (i % 40) * 37_000); // the last 25 minutes
    await ingest(60, (i) => 3 * DAY + i * 5 * 60_000); // late: three days ago, over five hours
    await assertRollupsMatch(t.db.db, a.org.id);
  });

  it('gives back a deleted log’s share, and drops the rows left without a log', async () => {
    const [only] = await ingest(1, () => 10 * DAY);
    await assertRollupsMatch(t.db.db, a.org.id);
    const res = await api(t.baseUrl, 'DELETE', `/api/request-logs/${only}/`, { key: a.key });
    assert.equal(res.status, 204, res.text);
    await assertRollupsMatch(t.db.db, a.org.id);
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
  });

  it('adds the logs stored before rollups existed, those deleted meanwhile left out', async () => {
    // As a database from before rollups: none for its logs, every id noted for the job.
    await t.db.db.deleteFrom('log_rollups').execute();
    const ids = await t.db.db
      .selectFrom('logs')
      .select([sql<number>`min(id)`.as('lo'), sql<number>`max(id)`.as('hi')])
      .executeTakeFirstOrThrow();
    await t.db.db
      .insertInto('rollup_backfill')
      .values({ id: 1, next_id: Number(ids.lo), last_id: Number(ids.hi) })
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
    // And from then on, logs written and deleted keep them right.
    await ingest(30, (i) => i * 1000);
    await assertRollupsMatch(t.db.db, a.org.id);
  });
});
