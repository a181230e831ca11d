import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, beforeEach, describe, it } from 'node:test';
import { sql } from 'kysely';
import OpenAI from 'openai';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';
import { BREAKDOWN_FIELDS } from '../support/proxied-route.js';

const PROVIDER_KEY = 'sk-registered-provider-key-5678';
const CUSTOMER_KEY = 'sk-customer-own-key-SECRETSECRET';

describe('embeddings: platform parameters, key resolution, upstream failures', () => {
  let fake: FakeUpstream;
  let t: TestApp;
  let a: Tenant;

  const post = (body: unknown, key = a.key) => api(t.baseUrl, 'POST', '/api/embeddings', { key, body });
  const lastLog = async (key = a.key) => {
    await t.flush();
    return (await api(t.baseUrl, 'GET', '/api/request-logs/list/?page_size=1&all_envs=true', { key })).body.results[0];
  };

  before(async () => {
    fake = await startFakeUpstream();
    t = await startApp({ env: { GATELOG_OPENAI_BASE_URL: fake.baseUrl, GATELOG_UPSTREAM_TIMEOUT_MS: '1000' } });
    a = await t.tenant({ owner: { email: 'owner@acme.test' } });
    await api(t.baseUrl, 'POST', '/api/provider-keys/', {
      key: a.key,
      body: { provider: 'openai', api_key: PROVIDER_KEY },
    });
  });
  beforeEach(() => fake.behave({ kind: 'ok' }));
  after(async () => {
    await t.close();
    await fake.close();
  });

  it("names the log of every call in X-Gatelog-Log-Id and passes the provider's x-request-id through", async () => {
    const ok = await post({ model: 'text-embedding-3-small', input: 'named' });
    assert.equal(ok.status, 200);
    assert.match(ok.headers.get('x-request-id') ?? '', /^req_\d+$/);
    const refused = await post({ model: 'text-embedding-3-small', input: '' });
    assert.equal(refused.status, 400);
    fake.behave({
      kind: 'fail',
      status: 429,
      body: { error: { message: 'slow down' } },
      headers: { 'x-request-id': 'req_limited' },
    });
    const limited = await post({ model: 'text-embedding-3-small', input: 'limited' });
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('x-request-id'), 'req_limited');
    await t.flush();
    for (const [res, status] of [
      [ok, 200],
      [refused, 400],
      [limited, 429],
    ] as const) {
      const id = res.headers.get('x-gatelog-log-id');
      assert.ok(id, `a log id for the ${status}`);
      const log = await api(t.baseUrl, 'GET', `/api/request-logs/${id}/`, { key: a.key });
      assert.equal(log.status, 200);
      assert.equal(log.body.status_code, status);
    }
  });

  it('records the platform parameters and strips them before the call goes upstream', async () => {
    const res = await post({
      model: 'text-embedding-3-small',
      input: 'tagged',
      user: 'end-user-1',
      extra_field: 'passes through',
      metadata: { feature: 'search', n: 2 },
      customer_identifier: 'cust-9',
      customer_email: 'c9@example.com',
      thread_identifier: 'thread-1',
    });
    assert.equal(res.status, 200);
    const sent = fake.requests.at(-1)!.json as Record<string, unknown>;
    assert.deepEqual(Object.keys(sent).sort(), ['extra_field', 'input', 'model', 'user']);
    const log = await lastLog();
    assert.deepEqual(log.metadata, { feature: 'search', n: 2 });
    assert.equal(log.customer_identifier, 'cust-9');
    assert.equal(log.customer_email, 'c9@example.com');
    assert.equal(log.thread_identifier, 'thread-1');
    assert.equal(log.user, 'owner@acme.test');
    const filtered = await api(
      t.baseUrl,
      'GET',
      '/api/request-logs/list/?metadata__feature=search&customer_identifier=cust-9',
      { key: a.key },
    );
    assert.equal(filtered.body.count, 1);
  });

  it('uses customer_credentials for that call only, and never stores or echoes them', async () => {
    const res = await post({
      model: 'text-embedding-3-small',
      input: 'byok',
      customer_credentials: { openai: { api_key: CUSTOMER_KEY } },
      request_breakdown: true,
    });
    assert.equal(res.status, 200);
    assert.equal(fake.requests.at(-1)!.headers.authorization, `Bearer ${CUSTOMER_KEY}`);
    assert.ok(!JSON.stringify(fake.requests.at(-1)!.json).includes(CUSTOMER_KEY));
    assert.ok(!res.text.includes(CUSTOMER_KEY), 'not echoed, not even in request_breakdown');
    const log = await lastLog();
    assert.equal(log.used_custom_credential, true);
    const stored = await sql<Record<string, unknown>>`select * from logs`.execute(t.db.db);
    const metadata = await sql<Record<string, unknown>>`select * from log_metadata`.execute(t.db.db);
    assert.ok(!JSON.stringify([stored.rows, metadata.rows]).includes('SECRETSECRET'));
    if (t.config.database.kind === 'sqlite') {
      await sql`pragma wal_checkpoint(TRUNCATE)`.execute(t.db.db);
      assert.ok(!fs.readFileSync(t.config.database.path).includes(Buffer.from('SECRETSECRET')));
    }
    await post({ model: 'text-embedding-3-small', input: 'after' });
    assert.equal(fake.requests.at(-1)!.headers.authorization, `Bearer ${PROVIDER_KEY}`);
  });

  it('adds request_breakdown with the fields of docs/api.md', async () => {
    const res = await post({
      model: 'text-embedding-3-small',
      input: 'rb',
      request_breakdown: true,
      metadata: { k: 'v' },
    });
    const rb = res.body.request_breakdown;
    assert.deepEqual(Object.keys(rb).sort(), [...BREAKDOWN_FIELDS].sort());
    assert.equal(rb.category, 'embedding');
    assert.equal(rb.cached, false);
    assert.deepEqual(rb.full_request, { model: 'text-embedding-3-small', input: 'rb' });
    assert.deepEqual(rb.metadata, { k: 'v' });
    assert.equal(rb.prompt_tokens, 2);
    const plain = await post({ model: 'text-embedding-3-small', input: 'rb' });
    assert.ok(!('request_breakdown' in plain.body));
  });

  it('keeps only metrics when disable_log is true', async () => {
    await post({ model: 'text-embedding-3-small', input: 'private text', disable_log: true });
    const log = await lastLog();
    assert.equal(log.input, null);
    assert.equal(log.output, null);
    assert.equal(log.prompt_tokens, 2);
    assert.equal(log.status_code, 200);
  });

  it('answers 400 provider_key_missing when no key is registered or sent, and logs it', async () => {
    const b = await t.tenant();
    const res = await post({ model: 'text-embedding-3-small', input: 'x' }, b.key);
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'provider_key_missing');
    assert.match(res.body.detail, /\/api\/provider-keys\//);
    const log = await lastLog(b.key);
    assert.equal(log.failed, true);
    assert.equal(log.status_code, 400);
  });

  it('answers 401 without a valid key and records nothing', async () => {
    const forwarded = fake.requests.length;
    const res = await api(t.baseUrl, 'POST', '/api/embeddings', {
      key: 'gl_live_wrong',
      body: { model: 'text-embedding-3-small', input: 'x' },
    });
    assert.equal(res.status, 401);
    assert.equal(fake.requests.length, forwarded);
  });

  it('passes upstream 429 and 500 through unchanged, one log per attempt that reached us', async () => {
    const b = await t.tenant();
    await api(t.baseUrl, 'POST', '/api/provider-keys/', {
      key: b.key,
      body: { provider: 'openai', api_key: PROVIDER_KEY },
    });
    const errorBody = {
      error: { message: 'Rate limit reached', type: 'requests', param: null, code: 'rate_limit_exceeded' },
    };
    fake.behave({ kind: 'fail', status: 429, body: errorBody, headers: { 'retry-after-ms': '10' } }, 3);
    const retrying = new OpenAI({ apiKey: b.key, baseURL: `${t.baseUrl}/api`, maxRetries: 2 });
    await assert.rejects(
      retrying.embeddings.create({ model: 'text-embedding-3-small', input: 'x' }),
      (err: unknown) => {
        assert.ok(err instanceof OpenAI.RateLimitError);
        assert.equal(err.message.includes('Rate limit reached'), true);
        return true;
      },
    );
    await t.flush();
    const logs = (await api(t.baseUrl, 'GET', '/api/request-logs/list/?page_size=10', { key: b.key })).body.results;
    assert.equal(logs.length, 3, 'the client tried 3 times: 3 logs');
    assert.ok(
      logs.every(
        (l: { status_code: number; error_message: string }) =>
          l.status_code === 429 && l.error_message === 'Rate limit reached',
      ),
    );

    fake.behave(
      {
        kind: 'fail',
        status: 500,
        body: { error: { message: 'boom', type: 'server_error', param: null, code: null } },
      },
      1,
    );
    const raw = await post({ model: 'text-embedding-3-small', input: 'x' }, b.key);
    assert.equal(raw.status, 500);
    assert.deepEqual(raw.body, { error: { message: 'boom', type: 'server_error', param: null, code: null } });
  });

  it('answers 504 when the upstream is too slow and 502 when it cannot be reached', async () => {
    fake.behave({ kind: 'hang' }, 1);
    const slow = await post({ model: 'text-embedding-3-small', input: 'x' });
    assert.equal(slow.status, 504);
    assert.equal(slow.body.error.type, 'upstream_error');
    assert.equal((await lastLog()).status_code, 504);

    fake.behave({ kind: 'drop' }, 1);
    const dropped = await post({ model: 'text-embedding-3-small', input: 'x' });
    assert.equal(dropped.status, 502);

    const c = await t.tenant();
    await api(t.baseUrl, 'POST', '/api/provider-keys/', {
      key: c.key,
      body: { provider: 'openai', api_key: PROVIDER_KEY, base_url: 'http://127.0.0.1:9/v1' },
    });
    const unreachable = await post({ model: 'text-embedding-3-small', input: 'x' }, c.key);
    assert.equal(unreachable.status, 502);
    assert.equal(unreachable.body.error.type, 'upstream_error');
    const log = await lastLog(c.key);
    assert.equal(log.status_code, 502);
    assert.equal(log.failed, true);
  });
});
