/**
 * A list call heavy enough to matter, on a store seeded with SQL: it runs beside the event loop (on
 * SQLite reader threads, on PostgreSQL's read pool), is stopped at GATELOG_QUERY_TIMEOUT_MS with a
 * 503, and on PostgreSQL is cancelled when its client goes away.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import os from 'node:os';
import { createMonthsOf } from '../../src/db/log-partitions.js';
import { sql } from 'kysely';
import { testDialect } from '../support/database.js';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';
import { whilePolling, stallBoundMs } from '../support/responsive.js';

const LOGS = 80_000;
const DAY = 86_400_000;

/** LOGS logs over the last 7 days, written by one INSERT … SELECT (no facet counts: none are read). */
async function seed(t: TestApp, organizationId: string, now: number): Promise<void> {
  const columns = sql`(unique_id, organization_id, environment, log_type, log_method, status_code, status, failed,
    error_message, custom_identifier, timestamp, start_time, created_at)`;
  const step = sql.lit(Math.floor((7 * DAY) / LOGS));
  const at = sql.lit(now);
  const values = (n: ReturnType<typeof sql>) => sql`'seed-' || ${n}, ${organizationId}, 'prod', 'chat', 'logging_api',
    200, 'success', 0, 'error text number ' || ${n}, 'custom ' || ${n}, ${at} - (${n} * ${step}),
    ${at} - (${n} * ${step}), ${at}`;
  if (testDialect === 'postgres') {
    // Written past the app's writer, which makes a month's partition when its first log comes: in a
    // month's first week, the last one's is made here.
    await createMonthsOf(t.db.db, [now - 7 * DAY, now]);
    await sql`insert into logs ${columns} select ${values(sql`g`)} from generate_series(1, ${sql.lit(LOGS)}) as g`.execute(
      t.db.db,
    );
    await sql`analyze logs`.execute(t.db.db);
  } else {
    await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${LOGS})
      insert into logs ${columns} select ${values(sql`i`)} from n`.execute(t.db.db);
  }
}

/** A filter every log must be tested against, 1,000 substring tests per log. */
const heavyFilters = () => ({
  error_message: { operator: 'icontains', value: Array.from({ length: 500 }, (_, i) => `absent-${i}`) },
  custom_identifier: { operator: 'icontains', value: Array.from({ length: 500 }, (_, i) => `nowhere-${i}`) },
});

describe('heavy list calls', () => {
  let t: TestApp;
  let tenant: Tenant;
  const range = () => {
    const end = new Date(Date.now() + 60_000).toISOString();
    const start = new Date(Date.now() - 8 * DAY).toISOString();
    return `start_time=${start}&end_time=${end}`;
  };

  before(async () => {
    t = await startApp({ env: { GATELOG_QUERY_TIMEOUT_MS: '1500' } });
    tenant = await t.tenant();
    await seed(t, tenant.org.id, Date.now());
  });
  after(() => t.close());

  it('runs beside the event loop and is stopped at the query budget with a 503', async () => {
    const started = performance.now();
    const { result, slowestMs } = await whilePolling(t.baseUrl, () =>
      api(t.baseUrl, 'POST', `/api/request-logs/list/?${range()}&fetch_filters=true`, {
        key: tenant.key,
        body: { filters: heavyFilters() },
      }),
    );
    const took = performance.now() - started;
    assert.equal(result.status, 503, result.text.slice(0, 200));
    assert.equal(result.body.error.code, 'query_timeout');
    assert.match(result.body.error.message, /GATELOG_QUERY_TIMEOUT_MS/);
    assert.ok(took < 4000, `answered after ${took.toFixed(0)} ms`);
    assert.ok(slowestMs < stallBoundMs(), `/health took ${slowestMs.toFixed(0)} ms meanwhile`);
    // Lists keep working after a stopped one.
    const light = await api(t.baseUrl, 'GET', `/api/request-logs/list/?${range()}&page_size=5`, { key: tenant.key });
    assert.equal(light.status, 200);
    assert.equal(light.body.count, LOGS);
    assert.equal(light.body.results.length, 5);
  });

  it('ten at once leave /health and ingestion answering', async () => {
    const { result, slowestMs } = await whilePolling(t.baseUrl, async () => {
      const lists = Array.from({ length: 10 }, () =>
        api(t.baseUrl, 'POST', `/api/request-logs/list/?${range()}`, {
          key: tenant.key,
          body: { filters: heavyFilters() },
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      const started = performance.now();
      const created = await api(t.baseUrl, 'POST', '/api/request-logs/create/', {
        key: tenant.key,
        body: { model: 'during-heavy-lists' },
      });
      const createMs = performance.now() - started;
      return { created, createMs, lists: await Promise.all(lists) };
    });
    // Ten heavy queries keep both cores of a small machine busy (PostgreSQL's backends, or reader
    // threads), so answers slow down with the CPU; what must not happen is waiting for a connection
    // the lists hold, which would last until their budget (1.5 s) ends.
    assert.equal(result.created.status, 201);
    assert.ok(result.createMs < 1000, `create took ${result.createMs.toFixed(0)} ms`);
    assert.ok(slowestMs < stallBoundMs(1000), `/health took ${slowestMs.toFixed(0)} ms meanwhile`);
    assert.deepEqual(
      result.lists.map((l) => l.status),
      Array.from({ length: 10 }, () => 503),
    );
  });

  // PostgreSQL's statements, as pg_stat_activity shows them. SQLite's reader threads are watched stopping
  // in cancel-on-leave.timed.test.ts (a filtered read stops within a few dozen logs: db/stop-point.ts).
  if (testDialect === 'postgres')
    it('stops the query on the database when its budget runs out or its client goes away', async () => {
      // The backends still running a heavy statement, described for a failure's message.
      const runningNow = async () => {
        const rows = await sql<{ pid: number; kind: string; wait: string | null; ms: number }>`select pid,
          backend_type as kind, wait_event as wait, (extract(epoch from clock_timestamp() - query_start) * 1000)::int as ms
          from pg_stat_activity where datname = current_database() and state = 'active' and query like '%strpos%'
          and pid <> pg_backend_pid()`.execute(t.db.db);
        return rows.rows.map((r) => `${r.pid} ${r.kind} wait=${r.wait ?? '-'} for ${r.ms} ms`);
      };
      const running = async () => (await runningNow()).length;
      // A cancelled backend ends once the database gets the CPU to see the cancel: the bound grows with
      // the machine's load (stallBoundMs), measured in real time, not in polls.
      const waitUntilGone = async (label: string) => {
        const bound = stallBoundMs(2000);
        const started = performance.now();
        for (let now = await runningNow(); now.length > 0; now = await runningNow()) {
          const waited = performance.now() - started;
          assert.ok(
            waited < bound,
            `the query still runs on the database after ${waited.toFixed(0)} ms (${label}; bound ${bound} ms, ` +
              `load ${os.loadavg()[0].toFixed(1)}): ${now.join('; ')}`,
          );
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      };
      const timedOut = await api(t.baseUrl, 'POST', `/api/request-logs/list/?${range()}`, {
        key: tenant.key,
        body: { filters: heavyFilters() },
      });
      assert.equal(timedOut.status, 503);
      await waitUntilGone('budget');

      const abort = new AbortController();
      const call = fetch(`${t.baseUrl}/api/request-logs/list/?${range()}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ filters: heavyFilters() }),
        signal: abort.signal,
      }).catch(() => null);
      for (let waited = 0; (await running()) === 0; waited += 20) {
        assert.ok(waited < 1000, 'the query never started');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      abort.abort();
      await call;
      await waitUntilGone('client gone');
    });
});
