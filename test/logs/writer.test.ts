import assert from 'node:assert/strict';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { after, before, describe, it } from 'node:test';
import { loadPriceTable } from '../../src/logs/pricing/price-table.js';
import { DeadLetterStore } from '../../src/logs/write/dead-letters.js';
import { KyselyInserter } from '../../src/logs/write/inserter.js';
import { buildNewLog, type NewLog } from '../../src/logs/write/new-log.js';
import { LogWriter } from '../../src/logs/write/writer.js';
import { createLogger } from '../../src/logger.js';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';
import { testDialect } from '../support/database.js';
import { OutageSwitch, setPostgresAvailable } from '../support/outage.js';
import { DEFAULT_LOG_MAX_BYTES } from '../../src/config.js';

/** The auth context of a tenant's key, for logs built directly. */
const authOf = (a: Tenant) => ({
  organizationId: a.org.id,
  organizationName: a.org.name,
  keyId: a.keyId,
  keyName: 'test-key',
  isTest: false,
  owner: { email: '', first_name: '', last_name: '' },
});

/** A proxied call: its log is queued off the response path (the buffered kind of log). */
const embed = (t: TestApp, key: string, input: string) =>
  api(t.baseUrl, 'POST', '/api/embeddings', {
    key,
    body: { model: 'text-embedding-3-small', input, customer_credentials: { openai: { api_key: 'sk-test' } } },
  });

describe('the log writer while the database is unavailable', () => {
  let t: TestApp;
  let a: Tenant;
  let fake: FakeUpstream;
  const outage = new OutageSwitch();
  const setAvailable = async (available: boolean) => {
    if (testDialect === 'postgres') await setPostgresAvailable(t.database.url, available);
    else outage.down = !available;
  };

  before(async () => {
    fake = await startFakeUpstream();
    t = await startApp({ outage, writer: { maxBackoffMs: 200 }, env: { GATELOG_OPENAI_BASE_URL: fake.baseUrl } });
    a = await t.tenant();
  });
  after(async () => {
    await setAvailable(true);
    await t.close();
    await fake.close();
  });

  it("answers logging-API calls 503 with Retry-After, keeps proxied calls' logs and writes them when it returns", async () => {
    // The key and the provider settings are read once while the database is up; during the outage the
    // cached answers are used.
    assert.equal((await embed(t, a.key, 'before')).status, 200);
    await t.flush();
    await setAvailable(false);
    try {
      const refused = await api(t.baseUrl, 'POST', '/api/request-logs/create/', { key: a.key, body: { model: 'm' } });
      assert.equal(refused.status, 503);
      assert.equal(refused.body.error.code, 'log_store_unavailable');
      assert.equal(refused.headers.get('retry-after'), '1');
      const batch = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', { key: a.key, body: [{}, {}] });
      assert.equal(batch.status, 503);
      for (let i = 0; i < 20; i++) assert.equal((await embed(t, a.key, `during ${i}`)).status, 200);
      // Let the writer try, fail and back off at least once.
      const deadline = Date.now() + 5000;
      while ((t.writer.healthy || t.writer.backlog < 20) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(t.writer.healthy, false);
      assert.equal(t.writer.backlog, 20);
      const health = await api(t.baseUrl, 'GET', '/health');
      assert.equal(health.status, 503);
      assert.equal(health.body.log_writer, 'retrying');
      assert.equal(health.body.log_backlog, 20);
    } finally {
      await setAvailable(true);
    }
    await t.flush();
    assert.equal(t.writer.healthy, true);
    assert.equal(t.writer.backlog, 0);
    const listed = await api(t.baseUrl, 'GET', '/api/request-logs/list/?page_size=100', { key: a.key });
    assert.equal(listed.body.count, 21, "the proxied calls' logs, and none of the refused logging-API calls");
    assert.equal((await api(t.baseUrl, 'GET', '/health')).status, 200);
    const created = await api(t.baseUrl, 'POST', '/api/request-logs/create/', { key: a.key, body: { model: 'm' } });
    assert.equal(created.status, 201);
  });

  it('refuses new logs with a 503 instead of acknowledging them when its buffer is full', async () => {
    const small = await startApp({
      writer: { maxQueued: 3, intervalMs: 60_000, batchSize: 1000 },
      env: { GATELOG_OPENAI_BASE_URL: fake.baseUrl },
    });
    try {
      const b = await small.tenant();
      for (let i = 0; i < 3; i++) assert.equal((await embed(small, b.key, `queued ${i}`)).status, 200);
      const full = await api(small.baseUrl, 'POST', '/api/request-logs/create/', { key: b.key, body: {} });
      assert.equal(full.status, 503);
      assert.equal(full.body.error.code, 'log_buffer_full');
      await small.flush();
      assert.equal(
        (await api(small.baseUrl, 'POST', '/api/request-logs/create/', { key: b.key, body: {} })).status,
        201,
      );
    } finally {
      await small.close();
    }
  });
});

describe('the log writer with a row the database refuses', () => {
  it('keeps only the offending group as a dead letter and writes the rest of the batch', async () => {
    const t = await startApp({ writer: { intervalMs: 60_000 } });
    try {
      const a = await t.tenant();
      const ok1 = await api(t.baseUrl, 'POST', '/api/request-logs/create/', { key: a.key, body: { model: 'first' } });
      await t.flush();
      // A log whose unique_id is already stored breaks the UNIQUE constraint: a bad row, not an outage.
      const auth = authOf(a);
      const withStoredUniqueId = (model: string) => {
        const log = buildNewLog(
          { log_method: 'logging_api', model },
          auth,
          loadPriceTable(null),
          DEFAULT_LOG_MAX_BYTES,
        );
        log.row.unique_id = ok1.body.unique_id;
        return log;
      };
      const dup = withStoredUniqueId('dup');
      const before = await api(t.baseUrl, 'POST', '/api/request-logs/create/', {
        key: a.key,
        body: { model: 'before' },
      });
      t.writer.enqueue([dup]);
      const after = await api(t.baseUrl, 'POST', '/api/request-logs/create/', { key: a.key, body: { model: 'after' } });
      await t.flush();
      assert.equal(t.writer.dropped, 1);
      assert.equal(t.writer.healthy, true);
      // The refused log is kept as a dead letter, counted on /health, and still there for a new process.
      const letters = await t.db.db.selectFrom('dead_letters').select(['unique_id', 'error', 'log']).execute();
      assert.equal(letters.length, 1);
      assert.equal(letters[0].unique_id, ok1.body.unique_id);
      assert.match(letters[0].error, /unique|UNIQUE/);
      assert.equal(JSON.parse(letters[0].log).row.model, 'dup');
      assert.equal((await api(t.baseUrl, 'GET', '/health')).body.dead_letters, 1);
      const again = new DeadLetterStore(t.db.db);
      await again.init();
      assert.equal(again.count, 1);
      // A logging-API write the database refuses is not acknowledged: its caller gets the error.
      const refused = withStoredUniqueId('dup2');
      await assert.rejects(t.writer.write([refused]), (err: { status?: number; code?: string }) => {
        return err.status === 500 && err.code === 'log_refused';
      });
      assert.equal((await api(t.baseUrl, 'GET', '/health')).body.dead_letters, 2);
      const listed = await api(t.baseUrl, 'GET', '/api/request-logs/list/', { key: a.key });
      const models = listed.body.results.map((r: { model: string }) => r.model).sort();
      assert.deepEqual(models, ['after', 'before', 'first']);
      assert.ok(listed.body.results.some((r: { unique_id: string }) => r.unique_id === before.body.unique_id));
      assert.ok(listed.body.results.some((r: { unique_id: string }) => r.unique_id === after.body.unique_id));
    } finally {
      await t.close();
    }
  });
});

// SQLite has no server to stop; a real way for its file to become unwritable is another process
// holding the write lock longer than the writer's busy timeout (5 s), which the worker thread that
// writes logs sees as SQLITE_BUSY.
if (testDialect === 'sqlite') {
  describe('the SQLite log-writing thread while another connection holds the write lock', () => {
    it("answers logging-API calls 503, keeps proxied calls' logs, writes them once the lock is released", async () => {
      const fake = await startFakeUpstream();
      const t = await startApp({ writer: { maxBackoffMs: 200 }, env: { GATELOG_OPENAI_BASE_URL: fake.baseUrl } });
      const locker = new SQLite(t.database.url);
      try {
        const a = await t.tenant();
        assert.equal((await embed(t, a.key, 'warm the key cache')).status, 200);
        await t.flush();
        locker.exec('BEGIN EXCLUSIVE');
        for (let i = 0; i < 5; i++) assert.equal((await embed(t, a.key, `during ${i}`)).status, 200);
        // A durable write waits for the lock as long as the busy timeout (5 s), then gives up.
        const refused = await api(t.baseUrl, 'POST', '/api/request-logs/create/', { key: a.key, body: { model: 'x' } });
        assert.equal(refused.status, 503);
        assert.equal(refused.headers.get('retry-after'), '1');
        const deadline = Date.now() + 15_000;
        while (t.writer.healthy && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        assert.equal(t.writer.healthy, false);
        assert.equal(t.writer.backlog, 5);
        const health = await api(t.baseUrl, 'GET', '/health');
        assert.equal(health.status, 503);
        assert.equal(health.body.log_backlog, 5);
        locker.exec('COMMIT');
        await t.flush();
        assert.equal(t.writer.healthy, true);
        const listed = await api(t.baseUrl, 'GET', '/api/request-logs/list/', { key: a.key });
        assert.equal(listed.body.count, 6);
      } finally {
        if (locker.inTransaction) locker.exec('ROLLBACK');
        locker.close();
        await t.close();
        await fake.close();
      }
    });
  });
}

// PostgreSQL's planner statistics are refreshed by gatelog itself after large ingests (autovacuum may
// be slow or off): reltuples of a table never analyzed is -1, and after ANALYZE the row count.
if (testDialect === 'postgres') {
  describe('planner statistics on PostgreSQL', () => {
    it('are refreshed after every so many logs written', async () => {
      const t = await startApp();
      try {
        const a = await t.tenant();
        const auth = authOf(a);
        const reltuples = async () =>
          (
            await sql<{ n: number }>`select reltuples::float8 as n from pg_class where relname = 'logs'`.execute(
              t.db.db,
            )
          ).rows[0].n;
        const inserter = new KyselyInserter(t.db.db, 50);
        const prices = loadPriceTable(null);
        const logs = (n: number) =>
          Array.from({ length: n }, () =>
            buildNewLog({ log_method: 'logging_api' }, auth, prices, DEFAULT_LOG_MAX_BYTES),
          );
        await inserter.insert(logs(40));
        await inserter.settled();
        const before = await reltuples();
        await inserter.insert(logs(20));
        await inserter.settled();
        assert.notEqual(before, 60);
        assert.equal(await reltuples(), 60);
      } finally {
        await t.close();
      }
    });
  });
}

describe('the log writer when the store returns', () => {
  it('reports itself healthy again even when the first batch after the outage fails on a broken connection', async () => {
    // The batch fails, but the store answers the outage probe: the writer writes the batch's logs one
    // at a time, and that success must end the outage it reported (it stayed "retrying" until the next log).
    let down = true;
    let brokenOnce = false;
    const inserter = {
      insert: async () => {
        if (down) throw new Error('connection refused');
        if (brokenOnce) {
          brokenOnce = false;
          throw new Error('terminating connection due to administrator command');
        }
      },
      isOutage: async () => down,
    };
    // The writer's timers do not keep a process alive; this test has nothing else that would.
    const alive = setInterval(() => {}, 1000);
    const writer = new LogWriter(inserter, createLogger('silent'), { maxBackoffMs: 50, intervalMs: 5 });
    const log = (id: string) => ({ row: { unique_id: id } }) as unknown as NewLog;
    writer.enqueue([log('a')]);
    for (let i = 0; i < 100 && writer.healthy; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(writer.healthy, false);
    down = false;
    brokenOnce = true;
    await writer.flush();
    assert.equal(writer.backlog, 0);
    assert.equal(writer.healthy, true);
    await writer.close();
    clearInterval(alive);
  });
});
