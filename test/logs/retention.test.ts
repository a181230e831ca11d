/**
 * The retention sweep: old logs deleted with their scores and facet counts, old content cleared with
 * every metric kept, organization overrides, dataset copies kept, /health and /metrics reporting it,
 * and a SQLite file that gives its pages back; on the database GATELOG_TEST_DB names.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import crypto from 'node:crypto';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { createLogger } from '../../src/logger.js';
import { RetentionSweep } from '../../src/retention/sweep.js';
import { runGatelog } from '../support/cli.js';
import { createTestDatabase, testDialect } from '../support/database.js';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';

const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

interface Report {
  started_at: string;
  deleted_logs: number;
  cleared_logs: number;
  complete: boolean;
  error: string | null;
}

/** The first complete sweep that started after `since` (runs come every second here). */
async function sweptAfter(t: TestApp, since: number): Promise<Report> {
  for (let tries = 0; tries < 200; tries += 1) {
    const health = await api(t.baseUrl, 'GET', '/health');
    const report = health.body.retention as Report | null;
    if (report && Date.parse(report.started_at) > since && report.complete) return report;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('no sweep ran');
}

async function seed(t: TestApp, who: Tenant, ageDays: number, model: string, count = 3): Promise<string[]> {
  const now = Date.now();
  const logs = Array.from({ length: count }, (_, i) => ({
    model,
    input: [{ role: 'user', content: `old question ${ageDays}d ${i}` }],
    output: { role: 'assistant', content: `old answer ${ageDays}d ${i}`, tool_calls: [] },
    prompt_tokens: 10,
    completion_tokens: 5,
    cost: 0.25,
    latency: 1.5,
    customer_identifier: `customer-${model}`,
    metadata: { tier: `tier-${model}` },
    timestamp: iso(now - ageDays * DAY - i * 1000),
  }));
  const res = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', { key: who.key, body: logs });
  assert.equal(res.status, 201, res.text);
  await t.flush();
  return res.body.unique_ids as string[];
}

const listOf = async (t: TestApp, who: Tenant, days = 400) =>
  api(
    t.baseUrl,
    'GET',
    `/api/request-logs/list/?start_time=${iso(Date.now() - days * DAY)}&page_size=100&fetch_filters=true`,
    {
      key: who.key,
    },
  );

describe('retention sweep', () => {
  let t: TestApp;
  let a: Tenant;
  let forever: Tenant;
  let shorter: Tenant;

  before(async () => {
    t = await startApp({
      env: { GATELOG_RETENTION_DAYS: '30', GATELOG_CONTENT_RETENTION_DAYS: '7', GATELOG_RETENTION_INTERVAL_S: '1' },
    });
    a = await t.tenant();
    forever = await t.tenant();
    shorter = await t.tenant();
  });
  after(() => t.close());

  it('takes retention_days and content_retention_days in the settings, null meaning the server default', async () => {
    const bad = await api(t.baseUrl, 'PATCH', '/api/settings/', { key: a.key, body: { retention_days: -1 } });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.body.error.param, 'retention_days');
    const fraction = await api(t.baseUrl, 'PATCH', '/api/settings/', {
      key: a.key,
      body: { content_retention_days: 1.5 },
    });
    assert.equal(fraction.status, 400, fraction.text);
    assert.equal(fraction.body.error.param, 'content_retention_days');
    const read = await api(t.baseUrl, 'GET', '/api/settings/', { key: a.key });
    assert.equal(read.body.retention_days, null);
    assert.equal(read.body.content_retention_days, null);
    const set = await api(t.baseUrl, 'PATCH', '/api/settings/', {
      key: forever.key,
      body: { retention_days: 0, content_retention_days: 0 },
    });
    assert.equal(set.status, 200, set.text);
    assert.equal(set.body.retention_days, 0);
    assert.equal(set.body.cache_enabled, false, 'other settings unchanged');
    const short = await api(t.baseUrl, 'PATCH', '/api/settings/', {
      key: shorter.key,
      body: { retention_days: 5, content_retention_days: 2 },
    });
    assert.equal(short.status, 200, short.text);
    const back = await api(t.baseUrl, 'PATCH', '/api/settings/', { key: a.key, body: { retention_days: 9 } });
    assert.equal(back.body.retention_days, 9);
    const reset = await api(t.baseUrl, 'PATCH', '/api/settings/', { key: a.key, body: { retention_days: null } });
    assert.equal(reset.status, 200, reset.text);
    assert.equal(reset.body.retention_days, null);
  });

  it('deletes old logs with their scores and facet counts, clears old content keeping metrics, keeps dataset copies', async () => {
    // Held until everything is in place: a sweep runs every second, and one between the seeding and the
    // copy into the dataset would leave nothing (or a cleared log) to copy.
    const hold = await api(t.baseUrl, 'PATCH', '/api/settings/', {
      key: a.key,
      body: { retention_days: 0, content_retention_days: 0 },
    });
    assert.equal(hold.status, 200, hold.text);
    const old = await seed(t, a, 40, 'gone-model');
    const middle = await seed(t, a, 10, 'kept-model');
    const fresh = await seed(t, a, 0, 'fresh-model');
    const evaluator = await api(t.baseUrl, 'POST', '/api/evaluators/', { key: a.key, body: { name: 'quality' } });
    assert.equal(evaluator.status, 201, evaluator.text);
    const score = await api(t.baseUrl, 'POST', `/api/logs/${old[0]}/scores/`, {
      key: a.key,
      body: { evaluator_id: evaluator.body.id, numerical_value: 4 },
    });
    assert.equal(score.status, 201, score.text);
    const dataset = await api(t.baseUrl, 'POST', '/api/datasets/', { key: a.key, body: { name: 'kept copies' } });
    assert.equal(dataset.status, 201, dataset.text);
    const copied = await api(t.baseUrl, 'POST', `/api/datasets/${dataset.body.id}/logs/`, {
      key: a.key,
      body: { log_ids: [old[0]] },
    });
    assert.equal(copied.status, 201, copied.text);
    const keptForever = await seed(t, forever, 40, 'forever-model');
    const shorterOld = await seed(t, shorter, 6, 'short-model');
    const shorterMiddle = await seed(t, shorter, 3, 'short-middle');

    // Indexed for search before the sweep: what the sweep clears must leave the index as well.
    await t.searchIndexer.catchUp();
    const found = async () =>
      (
        await api(
          t.baseUrl,
          'GET',
          `/api/request-logs/list/?start_time=${iso(Date.now() - 400 * DAY)}&search=old question`,
          { key: a.key },
        )
      ).body.count as number;
    assert.equal(await found(), 9, 'every seeded log found by its words');
    const release = await api(t.baseUrl, 'PATCH', '/api/settings/', {
      key: a.key,
      body: { retention_days: null, content_retention_days: null },
    });
    assert.equal(release.status, 200, release.text);
    const report = await sweptAfter(t, Date.now());
    assert.equal(report.error, null);
    // The first run may have taken some before this one; what matters is what is left.
    for (const id of old) {
      assert.equal((await api(t.baseUrl, 'GET', `/api/request-logs/${id}/`, { key: a.key })).status, 404, id);
    }
    const scoreRows = await t.db.db.selectFrom('scores').select('log_id').execute();
    assert.equal(scoreRows.length, 0, 'the deleted log took its score along');
    const list = await listOf(t, a);
    assert.equal(list.status, 200, list.text);
    const models = (list.body.filter_options.model.value_choices as { value: string; count: number }[]).map(
      (c) => `${c.value}:${c.count}`,
    );
    assert.deepEqual(models.sort(), ['fresh-model:3', 'kept-model:3'], 'facet counts follow the deletion');
    const tiers = (list.body.filter_options['metadata__tier'].value_choices as { value: string }[]).map((c) => c.value);
    assert.deepEqual(tiers.sort(), ['tier-fresh-model', 'tier-kept-model']);

    for (const id of middle) {
      const log = await api(t.baseUrl, 'GET', `/api/request-logs/${id}/`, { key: a.key });
      assert.equal(log.status, 200, log.text);
      assert.ok(!JSON.stringify(log.body).includes('old question'), 'the prompt is gone');
      assert.ok(!JSON.stringify(log.body).includes('old answer'), 'the completion is gone');
      assert.equal(log.body.cost, 0.25);
      assert.equal(log.body.prompt_tokens, 10);
      assert.equal(log.body.latency, 1.5);
      assert.equal(log.body.customer_identifier, 'customer-kept-model');
      assert.deepEqual(log.body.metadata, { tier: 'tier-kept-model' });
    }
    assert.equal(await found(), 3, 'deleted and cleared logs are no longer found, the fresh ones are');
    for (const id of fresh) {
      const log = await api(t.baseUrl, 'GET', `/api/request-logs/${id}/`, { key: a.key });
      assert.ok(JSON.stringify(log.body).includes('old question 0d'), 'a new log keeps its content');
    }
    const copy = await api(t.baseUrl, 'GET', `/api/datasets/${dataset.body.id}/logs/list/`, { key: a.key });
    assert.equal(copy.status, 200, copy.text);
    assert.equal(copy.body.count, 1, 'the dataset copy stays');
    assert.ok(JSON.stringify(copy.body).includes('old question 40d'), 'with its content');

    for (const id of keptForever) {
      const log = await api(t.baseUrl, 'GET', `/api/request-logs/${id}/`, { key: forever.key });
      assert.equal(log.status, 200, 'retention_days 0 keeps logs forever');
      assert.ok(JSON.stringify(log.body).includes('old question 40d'), 'content kept as long as the log');
    }
    for (const id of shorterOld) {
      const log = await api(t.baseUrl, 'GET', `/api/request-logs/${id}/`, { key: shorter.key });
      assert.equal(log.status, 404, "the organization's own 5 days");
    }
    for (const id of shorterMiddle) {
      const log = await api(t.baseUrl, 'GET', `/api/request-logs/${id}/`, { key: shorter.key });
      assert.equal(log.status, 200);
      assert.ok(!JSON.stringify(log.body).includes('old question'), "the organization's own 2 days of content");
    }

    const metrics = await api(t.baseUrl, 'GET', '/metrics');
    const deleted = /gatelog_retention_deleted_logs_total (\d+)/.exec(metrics.text);
    assert.ok(deleted && Number(deleted[1]) >= old.length + shorterOld.length, metrics.text.slice(0, 200));
    assert.match(metrics.text, /gatelog_retention_last_run_timestamp_seconds \d/);
  });

  it('removes expired cache entries in the same sweep', async () => {
    const now = Date.now();
    await t.db.db
      .insertInto('cache_entries')
      .values({
        organization_id: a.org.id,
        key: 'expired-entry',
        kind: 'chat',
        body: '{}',
        size: 2,
        created_at: now - 2 * DAY,
        expires_at: now - DAY,
      })
      .execute();
    await sweptAfter(t, Date.now());
    const left = await t.db.db.selectFrom('cache_entries').select('key').execute();
    assert.ok(!left.some((r) => r.key === 'expired-entry'));
  });
});

describe('retention across PostgreSQL nodes', { skip: testDialect !== 'postgres' }, () => {
  it('sweeps on one node at a time: a node finding another sweeping skips its round', async () => {
    const t = await startApp({ env: { GATELOG_RETENTION_DAYS: '1', GATELOG_RETENTION_INTERVAL_S: '3600' } });
    try {
      const a = await t.tenant();
      await seed(t, a, 3, 'old-model');
      const sweep = new RetentionSweep(
        t.db,
        { retentionDays: 1, contentRetentionDays: 0, intervalMs: 3_600_000 },
        createLogger('silent'),
        null,
      );
      // Another node's sweep: the same advisory lock, held on a connection of its own.
      await t.db.db.connection().execute(async (other) => {
        const { rows } = await sql<{ key: string }>`select 7402118305::bigint::text as key`.execute(other);
        await sql`select pg_advisory_lock(${rows[0]!.key}::bigint)`.execute(other);
        try {
          assert.equal(await sweep.run(), null, 'skipped while the other node sweeps');
          assert.equal((await listOf(t, a, 30)).body.count, 3);
        } finally {
          await sql`select pg_advisory_unlock(${rows[0]!.key}::bigint)`.execute(other);
        }
      });
      const report = await sweep.run();
      assert.equal(report?.deleted_logs, 3);
      assert.equal((await listOf(t, a, 30)).body.count, 0);
    } finally {
      await t.close();
    }
  });
});

describe('gatelog db vacuum', () => {
  it('compacts the database; an older SQLite file takes incremental auto-vacuum', async () => {
    const database = await createTestDatabase();
    try {
      if (testDialect === 'sqlite') {
        // A file made before incremental auto-vacuum: a table exists before gatelog opens it.
        const old = new SQLite(database.url);
        old.exec('create table earlier (x integer)');
        assert.equal(old.pragma('auto_vacuum', { simple: true }), 0);
        old.close();
      }
      const env = {
        GATELOG_DATABASE_URL: database.url,
        GATELOG_SECRET_KEY: crypto.randomBytes(32).toString('hex'),
      };
      const res = await runGatelog(['db', 'vacuum', '--json'], env);
      assert.equal(res.code, 0, res.stderr);
      assert.equal(JSON.parse(res.stdout).vacuumed, true);
      if (testDialect === 'sqlite') {
        const file = new SQLite(database.url);
        assert.equal(file.pragma('auto_vacuum', { simple: true }), 2, 'incremental from now on');
        file.close();
      }
      const extra = await runGatelog(['db', 'vacuum', 'now'], env);
      assert.equal(extra.code, 1);
      assert.match(extra.stderr, /expected 0 arguments/);
    } finally {
      await database.drop();
    }
  });
});

describe('retention on SQLite', { skip: testDialect !== 'sqlite' }, () => {
  it('creates files with incremental auto-vacuum, so pages of deleted logs go back', async () => {
    const t = await startApp({ env: { GATELOG_RETENTION_DAYS: '1', GATELOG_RETENTION_INTERVAL_S: '1' } });
    try {
      const mode = await sql<{ auto_vacuum: number }>`pragma auto_vacuum`.execute(t.db.db);
      assert.equal(mode.rows[0]?.auto_vacuum, 2, 'incremental');
      const a = await t.tenant();
      const big = 'x'.repeat(4000);
      for (let batch = 0; batch < 4; batch += 1) {
        const logs = Array.from({ length: 250 }, (_, i) => ({
          model: 'm',
          input: `${big} ${batch} ${i}`,
          output: big,
          timestamp: iso(Date.now() - 3 * DAY - i),
        }));
        const res = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', { key: a.key, body: logs });
        assert.equal(res.status, 201, res.text);
      }
      await t.flush();
      const pages = async () => {
        const [count] = (await sql<{ page_count: number }>`pragma page_count`.execute(t.db.db)).rows;
        const [free] = (await sql<{ freelist_count: number }>`pragma freelist_count`.execute(t.db.db)).rows;
        return { count: Number(count?.page_count), free: Number(free?.freelist_count) };
      };
      const full = await pages();
      await sweptAfter(t, Date.now());
      const list = await listOf(t, a, 30);
      assert.equal(list.body.count, 0);
      const after = await pages();
      assert.ok(after.count < full.count / 2, `pages: ${full.count} → ${after.count}`);
      assert.ok(after.free < 100, `free pages left: ${after.free}`);
    } finally {
      await t.close();
    }
  });
});
