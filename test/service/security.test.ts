/**
 * Security review, as tests: secrets (gatelog keys, registered provider keys, keys a caller sends in
 * customer_credentials) never appear in an answer, a service log line or a stored column; gatelog keys are
 * stored hashed and compared in constant time; a new SQLite store is readable by its owner only.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { connect } from '../../src/db/connect.js';
import { spawnServer, waitForExit } from '../support/cli.js';
import { createTestDatabase, testDialect, type TestDatabase } from '../support/database.js';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';
import { audioPath } from '../support/audio.js';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';
import { servedRoutes } from '../support/routes.js';
import { servedDatabase } from '../support/served-database.js';

const PROVIDER_SECRET = 'sk-registered-secret-0d9f8e7c6b5a4d3c';
const CUSTOMER_SECRET = 'sk-customer-secret-1a2b3c4d5e6f7a8b';

describe('secrets stay secret', () => {
  let database: TestDatabase;
  let fake: FakeUpstream;
  let server: { child: ChildProcess; baseUrl: string };
  let key: string;
  let output = '';
  /** Everything gatelog answered: status lines, headers and bodies. */
  const answers: string[] = [];

  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const init: RequestInit = { method, headers: { authorization: `Bearer ${key}`, ...headers } };
    if (body instanceof FormData) init.body = body;
    else if (body !== undefined) {
      init.body = JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] = 'application/json';
    }
    const res = await fetch(`${server.baseUrl}${path}`, init);
    const text = await res.text();
    answers.push(`${res.status} ${JSON.stringify([...res.headers])} ${text}`);
    return { status: res.status, text, json: () => JSON.parse(text) as Record<string, unknown> };
  };

  before(async () => {
    fake = await startFakeUpstream();
    let env: Record<string, string>;
    ({ database, env, key } = await servedDatabase('secrets-org'));
    // The most a service log says: every request and every debug line.
    server = await spawnServer(
      { ...env, GATELOG_OPENAI_BASE_URL: fake.baseUrl, GATELOG_LOG_LEVEL: 'trace' },
      (text) => {
        output += text;
      },
    );
  });
  after(async () => {
    server.child.kill('SIGTERM');
    await waitForExit(server.child);
    await fake.close();
    await database.drop();
  });

  it('never shows or stores a gatelog key, a provider key or customer_credentials', async () => {
    assert.equal(
      (await call('POST', '/api/provider-keys/', { provider: 'openai', api_key: PROVIDER_SECRET })).status,
      201,
    );
    assert.equal((await call('GET', '/api/provider-keys/')).status, 200);
    // Proxied calls with the registered key and with the caller's own, which the provider must get.
    const plain = await call('POST', '/api/embeddings', { model: 'text-embedding-3-small', input: 'hi' });
    assert.equal(plain.status, 200, plain.text);
    const own = await call('POST', '/api/embeddings', {
      model: 'text-embedding-3-small',
      input: 'hi',
      customer_credentials: { openai: { api_key: CUSTOMER_SECRET } },
      request_breakdown: true,
    });
    assert.equal(own.status, 200, own.text);
    assert.equal(fake.requests.at(-1)!.headers.authorization, `Bearer ${CUSTOMER_SECRET}`);
    const form = new FormData();
    form.append('file', new Blob([fs.readFileSync(audioPath('hello.wav'))]), 'hello.wav');
    form.append('model', 'whisper-1');
    form.append('customer_credentials[openai][api_key]', CUSTOMER_SECRET);
    form.append('request_breakdown', 'true');
    const spoken = await call('POST', '/api/audio/transcriptions', form);
    assert.equal(spoken.status, 200, spoken.text);
    // Refused calls log what they were given: the key must not be among it.
    const refused = await call('POST', '/api/embeddings', {
      model: 'no-such-model',
      input: 'hi',
      customer_credentials: { openai: { api_key: CUSTOMER_SECRET } },
    });
    assert.equal(refused.status, 400);
    fake.behave({ kind: 'fail', status: 500, body: { error: { message: 'upstream broke' } } }, 1);
    assert.equal(
      (
        await call('POST', '/api/embeddings', {
          model: 'text-embedding-3-small',
          input: 'hi',
          customer_credentials: { openai: { api_key: CUSTOMER_SECRET } },
        })
      ).status,
      500,
    );
    // The logging API is not a proxy: a customer_credentials it is sent is never kept either.
    const logged = await call('POST', '/api/request-logs/create/', {
      model: 'gpt-4o',
      output: 'ok',
      customer_credentials: { openai: { api_key: CUSTOMER_SECRET } },
      metadata: { note: 'plain' },
    });
    assert.ok([201, 400].includes(logged.status), logged.text);
    // Everything read back, whole.
    const list = await call('GET', '/api/request-logs/list/?page_size=100&fetch_filters=true');
    assert.equal(list.status, 200);
    for (const item of list.json().results as { unique_id: string }[]) {
      assert.equal((await call('GET', `/api/request-logs/${item.unique_id}/`)).status, 200);
    }
    // The service log holds a line for every request answered (the last ones may still be on their way).
    const requestLines = () => output.split('\n').filter((l) => l.includes('"msg":"request completed"')).length;
    for (let waited = 0; requestLines() < answers.length; waited += 20) {
      assert.ok(waited < 10_000, `${requestLines()} request lines in the service log for ${answers.length} answers`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }

    const secrets = {
      'the gatelog key': key,
      'the provider key': PROVIDER_SECRET,
      customer_credentials: CUSTOMER_SECRET,
    };
    for (const [what, secret] of Object.entries(secrets)) {
      for (const answer of answers)
        assert.ok(!answer.includes(secret), `${what} in an answer: ${answer.slice(0, 300)}`);
      const line = output.split('\n').find((l) => l.includes(secret));
      assert.equal(
        line,
        undefined,
        `${what} in the service log: ${line?.replaceAll(secret, '«secret»').slice(0, 400)}`,
      );
    }
    assert.ok(requestLines() >= answers.length, 'the service log was read');

    const { db } = connect(database.target);
    try {
      const tables = await db.introspection.getTables();
      assert.ok(tables.length >= 10);
      let rows = 0;
      for (const table of tables) {
        const found = await sql<Record<string, unknown>>`select * from ${sql.table(table.name)}`.execute(db);
        rows += found.rows.length;
        const text = JSON.stringify(found.rows, (_k, v: unknown) =>
          Buffer.isBuffer(v) ? v.toString('latin1') : typeof v === 'bigint' ? String(v) : v,
        );
        for (const [what, secret] of Object.entries(secrets)) {
          assert.ok(!text.includes(secret), `${what} stored in ${table.name}`);
        }
      }
      assert.ok(rows > 10, 'the store was read');
    } finally {
      await db.destroy();
    }
  });
});

describe('gatelog keys', () => {
  let t: TestApp;
  before(async () => (t = await startApp()));
  after(() => t.close());

  it('are stored as hashes only and checked with a constant-time comparison', async () => {
    const a = await t.tenant();
    const rows = await t.db.db.selectFrom('api_keys').selectAll().execute();
    for (const row of rows) {
      assert.ok(!JSON.stringify(row).includes(a.key.slice(12)), 'no column holds the key or most of it');
    }
    const mine = rows.find((r) => r.id === a.keyId)!;
    assert.equal(mine.key_hash, crypto.createHash('sha256').update(a.key).digest('hex'));

    // A key that shares the real one's prefix reaches the comparison of hashes, which must be
    // crypto.timingSafeEqual: its time does not depend on how many leading bytes match.
    const original = crypto.timingSafeEqual;
    let compared = 0;
    crypto.timingSafeEqual = (x: NodeJS.ArrayBufferView, y: NodeJS.ArrayBufferView) => {
      compared += 1;
      return original(x, y);
    };
    try {
      const forged = a.key.slice(0, -4) + (a.key.endsWith('AAAA') ? 'BBBB' : 'AAAA');
      const res = await api(t.baseUrl, 'GET', '/api/evaluators/', { key: forged });
      assert.equal(res.status, 401);
      assert.ok(compared >= 1, 'the stored hash was compared in constant time');
      compared = 0;
      assert.equal((await api(t.baseUrl, 'GET', '/api/evaluators/', { key: a.key })).status, 200);
      assert.ok(compared >= 1);
    } finally {
      crypto.timingSafeEqual = original;
    }
  });
});

describe('a new SQLite store', { skip: testDialect !== 'sqlite' }, () => {
  it('is readable and writable by its owner only, its write-ahead log too', async () => {
    const database = await createTestDatabase();
    try {
      const { db } = connect(database.target);
      await sql`create table t (x integer)`.execute(db);
      await sql`insert into t values (1)`.execute(db);
      for (const file of [database.url, `${database.url}-wal`]) {
        assert.equal((fs.statSync(file).mode & 0o777).toString(8), '600', file);
      }
      await db.destroy();
    } finally {
      await database.drop();
    }
  });
});

describe("one organization and another's data", () => {
  let t: TestApp;
  let a: Tenant;
  let b: Tenant;
  const MARK = 'only-organization-a-knows-this';
  const ids: Record<string, string> = {};
  const as = (tenant: Tenant) => (method: string, path: string, body?: unknown) =>
    api(t.baseUrl, method, path, { key: tenant.key, body });

  before(async () => {
    t = await startApp();
    a = await t.tenant();
    b = await t.tenant();
    const callA = as(a);
    const evaluator = await callA('POST', '/api/evaluators/', { name: `quality ${MARK}` });
    ids.evaluator = evaluator.body.id;
    const logs = await callA('POST', '/api/request-logs/batch/', {
      logs: [1, 2, 3].map((i) => ({ model: `model-${MARK}`, output: `${MARK} ${i}`, metadata: { secret: MARK } })),
    });
    assert.equal(logs.status, 201, logs.text);
    [ids.log, ids.otherLog] = logs.body.unique_ids;
    const score = await callA('POST', `/api/logs/${ids.log}/scores/`, {
      evaluator_id: ids.evaluator,
      numerical_value: 3,
    });
    assert.equal(score.status, 201, score.text);
    ids.score = score.body.id;
    const dataset = await callA('POST', '/api/datasets/', { name: `set ${MARK}` });
    assert.equal(dataset.status, 201, dataset.text);
    ids.dataset = dataset.body.id;
    const view = await callA('POST', '/api/views/', { name: `view ${MARK}`, query: `?marked=${MARK}` });
    assert.equal(view.status, 201, view.text);
    ids.view = view.body.id;
    const added = await callA('POST', `/api/datasets/${ids.dataset}/logs/`, { log_ids: [ids.log] });
    assert.equal(added.status, 201, added.text);
    const datasetLogs = await callA('GET', `/api/datasets/${ids.dataset}/logs/list/`);
    ids.datasetLog = datasetLogs.body.results[0].id;
    assert.equal(
      (await callA('POST', '/api/provider-keys/', { provider: 'openai', api_key: 'sk-a-only' })).status,
      201,
    );
    const limit = await callA('POST', '/api/rate-limits/', {
      applies_to: { type: 'customer', value: MARK },
      requests_per_minute: 5,
    });
    assert.equal(limit.status, 201, limit.text);
    ids.rateLimit = limit.body.id;
    const budget = await callA('POST', '/api/budgets/', {
      name: `budget ${MARK}`,
      applies_to: { type: 'organization' },
      amount_usd: 5,
    });
    assert.equal(budget.status, 201, budget.text);
    ids.budget = budget.body.id;
  });
  after(() => t.close());

  /** What a route's path parameter names, in organization A's data. */
  function idFor(route: string, param: string): string {
    if (param === 'unique_id') return ids.log;
    if (param === 'dataset_id') return ids.dataset;
    if (param === 'log_id') return ids.datasetLog;
    if (param === 'provider') return 'openai';
    if (param === 'key_id') return 'default';
    // A stored response lives at the provider: B's call goes out with B's provider key, never A's.
    if (param === 'response_id') return `resp_${MARK}`;
    if (param === 'id' && route.startsWith('/api/evaluators/')) return ids.evaluator;
    if (param === 'id' && route.startsWith('/api/views/')) return ids.view;
    if (param === 'id' && route.startsWith('/api/keys/')) return a.keyId;
    if (param === 'id' && route.startsWith('/api/rate-limits/')) return ids.rateLimit;
    if (param === 'id' && route.startsWith('/api/budgets/')) return ids.budget;
    if ((param === 'id' || param === 'score_id') && route.includes('/scores/')) return ids.score;
    return assert.fail(`${route}: a route parameter this test does not know (${param}); give it A's id`);
  }

  it("finds none of A's data through any route that takes an id, and changes none of it", async () => {
    // Every route with an id, but the web UI's static files (under /ui/, no organization's data).
    const routes = [...servedRoutes(t.app.printRoutes({ commonPrefix: false }))].filter(
      (r) => r.includes('{') && r.split(' ')[1].startsWith('/api/'),
    );
    assert.ok(routes.length >= 20, routes.join('\n'));
    const callB = as(b);
    for (const route of routes) {
      const [method, template] = route.split(' ');
      const path = template.replace(/\{(\w+)\}/g, (_m, param: string) => idFor(template, param));
      // A plausible body for each kind of write: an empty one would only test validation.
      const body =
        method === 'GET' || method === 'DELETE'
          ? undefined
          : path.endsWith('/scores/')
            ? { evaluator_slug: 'quality', numerical_value: 1 }
            : path.endsWith('/logs/')
              ? { log_ids: [ids.otherLog] }
              : path.endsWith('/list/')
                ? { filters: {} }
                : path.endsWith('/delete/')
                  ? { is_deleting_all_logs: true }
                  : { name: 'taken over', annotation_status: 'done', metadata: { by: 'b' } };
      const res = await callB(method, path, body);
      assert.ok([400, 404].includes(res.status), `${route} answered B ${res.status}: ${res.text.slice(0, 200)}`);
      assert.ok(!res.text.includes(MARK), `${route} showed B some of A's data`);
    }
    // A's data is all there, unchanged.
    const callA = as(a);
    const log = await callA('GET', `/api/request-logs/${ids.log}/`);
    assert.equal(log.status, 200);
    assert.equal(log.body.output, JSON.stringify(`${MARK} 1`));
    assert.deepEqual(log.body.metadata, { secret: MARK });
    assert.equal((await callA('GET', `/api/evaluators/${ids.evaluator}/`)).body.name, `quality ${MARK}`);
    assert.equal((await callA('GET', `/api/logs/${ids.log}/scores/`)).body.length ?? 1, 1);
    const dataset = await callA('GET', `/api/datasets/${ids.dataset}/`);
    assert.equal(dataset.body.name, `set ${MARK}`);
    assert.equal(dataset.body.log_count, 1);
    assert.equal((await callA('GET', `/api/datasets/${ids.dataset}/logs/${ids.datasetLog}/`)).status, 200);
    const providers = (await callA('GET', '/api/provider-keys/')).body.results;
    assert.equal(providers.length, 1);
    assert.equal(providers[0].keys.length, 1, "A's key is still there");
    const limit = await callA('GET', `/api/rate-limits/${ids.rateLimit}/`);
    assert.equal(limit.body.requests_per_minute, 5, "A's rate limit is unchanged");
    const budget = await callA('GET', `/api/budgets/${ids.budget}/`);
    assert.deepEqual([budget.body.name, budget.body.amount_usd], [`budget ${MARK}`, 5], "A's budget is unchanged");
  });

  it("lists, filters, counts and collects none of A's logs for B", async () => {
    const callB = as(b);
    await callB('POST', '/api/request-logs/create/', { model: 'b-model', output: 'b' });
    await t.flush();
    const byId = await callB('POST', '/api/request-logs/list/?fetch_filters=true', {
      filters: { unique_id: { operator: '', value: [ids.log, ids.otherLog] } },
    });
    assert.equal(byId.status, 200, byId.text);
    assert.equal(byId.body.count, 0);
    const all = await callB('GET', '/api/request-logs/list/?fetch_filters=true&all_envs=true&sort_by=-cost');
    assert.equal(all.body.count, 1);
    assert.ok(!all.text.includes(MARK), "filter_options and rows hold only B's");
    const byMetadata = await callB('GET', `/api/request-logs/list/?metadata__secret=${MARK}`);
    assert.equal(byMetadata.body.count, 0);
    // An export, and a link to one (followed without a key), hold B's logs only.
    const exported = await callB('GET', '/api/request-logs/export/?all_envs=true');
    assert.ok(exported.text.includes('b-model') && !exported.text.includes(MARK));
    const link = await callB('POST', '/api/request-logs/export/tokens/?all_envs=true', {});
    assert.equal(link.status, 201, link.text);
    const linked = await (await fetch(link.body.url)).text();
    assert.ok(linked.includes('b-model') && !linked.includes(MARK), linked);
    // A dataset of B's cannot take A's logs, by id or otherwise.
    const own = await callB('POST', '/api/datasets/', {
      name: 'b set',
      start_time: new Date(Date.now() - 3600_000).toISOString(),
    });
    assert.equal(own.status, 201, own.text);
    assert.equal(own.body.log_count, 1, "B's dataset from a time range holds B's log only");
    const taken = await callB('POST', `/api/datasets/${own.body.id}/logs/`, { log_ids: [ids.log] });
    assert.equal(taken.status, 400, taken.text);
    assert.ok(taken.text.includes(ids.log), 'the refusal names the id it does not know');
    const evaluators = await callB('GET', '/api/evaluators/');
    assert.ok(!evaluators.text.includes(MARK));
    const datasets = await callB('GET', '/api/datasets/');
    assert.ok(!datasets.text.includes(MARK));
  });
});
