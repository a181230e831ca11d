/**
 * The database unreachable for 30 s in the middle of a load run. On PostgreSQL the test database really
 * stops taking connections and its sessions are ended; SQLite has no server to lose, so there every query
 * fails as an unopenable file would (see support/outage.ts). Proxied calls keep succeeding, their logs
 * wait in the bounded buffer and are written when it returns; logging-API calls and other writes get 503
 * with Retry-After while nothing can be committed; /health and the service log say so. Nothing is lost.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';
import { testDialect } from '../support/database.js';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';
import { acknowledgedIds, runMixedLoad } from '../support/mixed-load.js';
import { OutageSwitch, setPostgresAvailable } from '../support/outage.js';

const OUTAGE_MS = Number(process.env.GATELOG_TEST_OUTAGE_MS ?? 30_000);
const BEFORE_MS = 4000;
const AFTER_MS = 4000;

describe('the database unreachable for 30 s under load', () => {
  let t: TestApp;
  let a: Tenant;
  let fake: FakeUpstream;
  const outage = new OutageSwitch();
  const logLines: Record<string, unknown>[] = [];
  const setAvailable = async (available: boolean) => {
    if (testDialect === 'postgres') await setPostgresAvailable(t.database.url, available);
    else outage.down = !available;
  };

  before(async () => {
    fake = await startFakeUpstream();
    t = await startApp({
      outage,
      logLines,
      writer: { maxBackoffMs: 1000 },
      env: { GATELOG_OPENAI_BASE_URL: fake.baseUrl },
    });
    a = await t.tenant();
    const registered = await api(t.baseUrl, 'POST', '/api/provider-keys/', {
      key: a.key,
      body: { provider: 'openai', api_key: 'sk-outage' },
    });
    assert.equal(registered.status, 201);
  });
  after(async () => {
    await setAvailable(true);
    await t.close();
    await fake.close();
  });

  it('keeps proxied calls answering, refuses logging calls with 503 + Retry-After, and loses nothing', async (ctx) => {
    const seconds = (BEFORE_MS + OUTAGE_MS + AFTER_MS) / 1000;
    const run = runMixedLoad({ nodes: [t.baseUrl], key: a.key, rate: 150, seconds });
    await new Promise((resolve) => setTimeout(resolve, BEFORE_MS));
    await setAvailable(false);
    const outageStart = performance.now();
    const during: { health: number[]; writer: unknown[]; dataset: number | null; datasetCode: unknown } = {
      health: [],
      writer: [],
      dataset: null,
      datasetCode: null,
    };
    try {
      while (performance.now() - outageStart < OUTAGE_MS) {
        const health = await api(t.baseUrl, 'GET', '/health');
        during.health.push(health.status);
        during.writer.push(health.body.log_writer);
        if (during.dataset === null && performance.now() - outageStart > 2000) {
          const made = await api(t.baseUrl, 'POST', '/api/datasets/', { key: a.key, body: { name: 'during' } });
          during.dataset = made.status;
          during.datasetCode = made.body.error?.code;
          assert.ok(made.headers.get('retry-after'), made.text);
        }
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    } finally {
      await setAvailable(true);
    }
    const result = await run;
    ctx.diagnostic(`calls by kind and status: ${JSON.stringify(result.tally)}`);

    // Proxied calls: every one answered 200, throughout.
    const proxied = result.outcomes.filter((o) => o.kind === 'proxied');
    assert.deepEqual([...new Set(proxied.map((o) => o.status))], [200], JSON.stringify(result.tally));
    // Logging-API calls: acknowledged (201), or refused with 503 and Retry-After — and refused during the outage.
    const logging = result.outcomes.filter((o) => o.kind !== 'proxied');
    const refused = logging.filter((o) => o.status === 503);
    assert.deepEqual(
      logging.filter((o) => o.status !== 201 && o.status !== 503),
      [],
      JSON.stringify(result.tally),
    );
    assert.ok(refused.length > 100, `only ${refused.length} refused: ${JSON.stringify(result.tally)}`);
    assert.ok(
      refused.every((o) => o.retryAfter !== null),
      'every 503 says when to retry',
    );
    const lastRefusal = Math.max(...refused.map((o) => o.at));
    assert.ok(
      logging.some((o) => o.status === 201 && o.at > lastRefusal),
      'logging calls are acknowledged again after the outage',
    );

    assert.ok(during.health.includes(503), `/health during the outage: ${during.health.join(',')}`);
    assert.ok(during.writer.includes('retrying'), `log_writer during the outage: ${during.writer.join(',')}`);
    assert.equal(during.dataset, 503);
    assert.equal(during.datasetCode, 'database_unavailable');
    const messages = logLines.map((l) => String(l.msg));
    assert.ok(
      messages.includes('log store unavailable; logs are kept and retried'),
      'the outage is in the service log',
    );
    assert.ok(messages.includes('log store available again; queued logs written'), 'and its end');

    await t.flush();
    assert.equal(t.writer.backlog, 0);
    assert.equal((await api(t.baseUrl, 'GET', '/health')).status, 200);
    const acknowledged = acknowledgedIds(result);
    const rows = (await sql<{ unique_id: string }>`select unique_id from logs`.execute(t.db.db)).rows;
    const stored = new Set(rows.map((r) => r.unique_id));
    const missing = acknowledged.filter((id) => !stored.has(id));
    assert.deepEqual(missing.slice(0, 5), [], `${missing.length} of ${acknowledged.length} acknowledged logs lost`);
    assert.equal(rows.length, acknowledged.length, 'each stored once, and nothing refused was stored');
  });
});
