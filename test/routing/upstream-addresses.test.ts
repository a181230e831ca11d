/**
 * What an organization's provider base_url may reach (docs/api.md "Provider addresses"): under
 * GATELOG_UPSTREAM_PRIVATE_ADDRESSES=deny every spelling of a loopback, private, link-local or
 * unspecified address is refused at registration, and a name is refused on the address it resolves to
 * when the connection is made; by default (allow) a local model server keeps working, but the cloud
 * metadata address is refused unless listed. Whatever the address, only JSON and event streams come back
 * from a provider, and an origin's connection pool is closed once idle.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { UpstreamClient } from '../../src/providers/upstream-client.js';
import { api, closeInOrder, startApp, startAppWithTenant, type Tenant, type TestApp } from '../support/harness.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { registerProviderKey, startAppOnFakeUpstream } from '../support/proxy-app.js';

/** Every spelling of the loopback host the probe found accepted (2130706433 is 127.0.0.1 as one number). */
const LOOPBACK_SPELLINGS = ['127.0.0.1', '0.0.0.0', '2130706433', '[::ffff:127.0.0.1]', '[::1]', '127.1'];

const chat = (t: TestApp, key: string, model: string) =>
  api(t.baseUrl, 'POST', '/api/chat/completions', {
    key,
    body: { model, messages: [{ role: 'user', content: 'Hello' }] },
  });

const register = (t: TestApp, key: string, provider: string, baseUrl: string) =>
  api(t.baseUrl, 'POST', '/api/provider-keys/', {
    key,
    body: { provider, api_key: 'sk-local-000001', base_url: baseUrl, models: [`${provider}-model`] },
  });

/** The fake's base URL with another host spelling. */
const at = (fake: FakeUpstream, host: string) => {
  const url = new URL(fake.baseUrl);
  return `http://${host}:${url.port}${url.pathname}`;
};

describe('GATELOG_UPSTREAM_PRIVATE_ADDRESSES=deny', () => {
  let fake: FakeUpstream;
  let t: TestApp;
  let a: Tenant;
  const logLines: Record<string, unknown>[] = [];
  before(async () => {
    ({ fake, t, a } = await startAppOnFakeUpstream({ env: { GATELOG_UPSTREAM_PRIVATE_ADDRESSES: 'deny' }, logLines }));
  });
  after(() => closeInOrder(t, fake));

  it('refuses every spelling of an internal address at registration, naming base_url and why', async () => {
    const kinds: [string, RegExp][] = [
      ...LOOPBACK_SPELLINGS.map((host): [string, RegExp] => [host, /a loopback address|an unspecified address/]),
      ['10.1.2.3', /a private address/],
      ['[fd12::1]', /a private address/],
      ['169.254.10.1', /a link-local address/],
      ['169.254.169.254', /the cloud metadata address/],
    ];
    for (const [host, why] of kinds) {
      const res = await register(t, a.key, 'local', at(fake, host));
      assert.equal(res.status, 400, `${host}: ${res.text}`);
      assert.equal(res.body.error.code, 'upstream_address_denied', host);
      assert.equal(res.body.error.param, 'base_url', host);
      assert.match(res.body.error.message, why, host);
      assert.match(res.body.error.message, /GATELOG_UPSTREAM_ALLOWED_ADDRESSES/, host);
    }
    const listed = await api(t.baseUrl, 'GET', '/api/provider-keys/', { key: a.key });
    assert.deepEqual(listed.body.results, [], 'nothing was stored');
  });

  it('refuses a name that resolves to loopback when it connects, and says why', async () => {
    const b = await t.tenant();
    assert.equal((await register(t, b.key, 'local', at(fake, 'localhost'))).status, 201);
    const begun = fake.begun;
    const res = await chat(t, b.key, 'local-model');
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.code, 'upstream_address_denied');
    const why = /host 'localhost' resolved to (127\.0\.0\.1|::1), a loopback address/;
    assert.match(res.body.error.message, why);
    // The stored responses of that provider are refused the same way.
    const stored = await api(t.baseUrl, 'GET', '/api/responses/resp_1?provider=local', { key: b.key });
    assert.equal(stored.status, 400, stored.text);
    assert.equal(stored.body.error.code, 'upstream_address_denied');
    assert.equal(fake.begun, begun, 'nothing reached the address');
    // The call's log and the service log say why.
    await t.flush();
    const logs = await api(t.baseUrl, 'GET', '/api/request-logs/list/', { key: b.key });
    assert.equal(logs.body.results[0].status_code, 400);
    const log = await api(t.baseUrl, 'GET', `/api/request-logs/${logs.body.results[0].unique_id}/`, { key: b.key });
    assert.match(log.body.error_message, why);
    const line = logLines.find((l) => l.code === 'upstream_address_denied' && why.test(String(l.msg)));
    assert.ok(line, 'the service log names the refusal');
  });

  it("still calls the operator's own upstream (GATELOG_OPENAI_BASE_URL), on any address", async () => {
    const c = await t.tenant();
    await registerProviderKey(t, c.key, { provider: 'openai', api_key: 'sk-operator-upstream-1' });
    assert.equal((await chat(t, c.key, 'gpt-4o-mini')).status, 200);
  });
});

describe('GATELOG_UPSTREAM_PRIVATE_ADDRESSES=deny with GATELOG_UPSTREAM_ALLOWED_ADDRESSES', () => {
  let fake: FakeUpstream;
  let t: TestApp;
  before(async () => {
    fake = await startFakeUpstream();
    t = await startApp({
      env: {
        GATELOG_UPSTREAM_PRIVATE_ADDRESSES: 'deny',
        GATELOG_UPSTREAM_ALLOWED_ADDRESSES: '127.0.0.0/8, ::1',
      },
    });
  });
  after(() => closeInOrder(t, fake));

  it('calls the listed addresses, by name or literally, and refuses the rest', async () => {
    const { key } = await t.tenant();
    assert.equal((await register(t, key, 'byname', at(fake, 'localhost'))).status, 201);
    assert.equal((await register(t, key, 'literal', at(fake, '2130706433'))).status, 201);
    assert.equal((await chat(t, key, 'byname-model')).status, 200);
    assert.equal((await chat(t, key, 'literal-model')).status, 200);
    assert.equal((await register(t, key, 'other', at(fake, '0.0.0.0'))).status, 400);
  });
});

describe('the default: GATELOG_UPSTREAM_PRIVATE_ADDRESSES=allow', () => {
  let fake: FakeUpstream;
  let t: TestApp;
  let key: string;
  before(async () => {
    fake = await startFakeUpstream();
    [t, { key }] = await startAppWithTenant();
  });
  after(() => closeInOrder(t, fake));

  it('calls a local model server under every spelling', async () => {
    for (const [i, host] of [...LOOPBACK_SPELLINGS, 'localhost'].entries()) {
      const res = await register(t, key, `local${i}`, at(fake, host));
      assert.equal(res.status, 201, `${host}: ${res.text}`);
    }
    // The IPv6 spellings reach a server on 127.0.0.1 only where the host has IPv6; the rest always do.
    for (const host of ['127.0.0.1', '0.0.0.0', '2130706433', '127.1', 'localhost']) {
      const index = [...LOOPBACK_SPELLINGS, 'localhost'].indexOf(host);
      const res = await chat(t, key, `local${index}-model`);
      assert.equal(res.status, 200, `${host}: ${res.text}`);
    }
  });

  it('refuses the cloud metadata address unless it is listed', async () => {
    const res = await register(t, key, 'meta', 'http://169.254.169.254/latest');
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.code, 'upstream_address_denied');
    assert.match(res.body.error.message, /the cloud metadata address.*GATELOG_UPSTREAM_ALLOWED_ADDRESSES/);
    const ipv6 = await register(t, key, 'meta', 'http://[fd00:ec2::254]/latest');
    assert.equal(ipv6.status, 400, ipv6.text);
    const listed = await startApp({ env: { GATELOG_UPSTREAM_ALLOWED_ADDRESSES: '169.254.169.254' } });
    try {
      const other = await listed.tenant();
      assert.equal((await register(listed, other.key, 'meta', 'http://169.254.169.254/latest')).status, 201);
    } finally {
      await listed.close();
    }
  });

  it('answers in the envelope for a provider answer that is not JSON or an event stream (502, or its error status)', async () => {
    assert.equal((await register(t, key, 'page', fake.baseUrl)).status, 201);
    const page = '<html><body><script>fetch("/internal")</script></body></html>';
    for (const [status, answered] of [
      [200, 502],
      [404, 404],
      [429, 429],
    ]) {
      fake.behave(
        { kind: 'fail', status, body: page, headers: { 'content-type': 'text/html', 'retry-after': '7' } },
        1,
      );
      const res = await chat(t, key, 'page-model');
      assert.equal(res.status, answered, res.text);
      // An error page keeps its status and Retry-After; only its body is replaced.
      if (status >= 400) assert.equal(res.headers.get('retry-after'), '7');
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(res.body.error.code, 'upstream_invalid_content_type');
      assert.ok(!res.text.includes('<script>'), 'the page is not passed back');
    }
    // A stored response read is a provider answer too.
    fake.behave({ kind: 'fail', status: 200, body: page, headers: { 'content-type': 'text/html; charset=utf-8' } }, 1);
    const stored = await api(t.baseUrl, 'GET', '/api/responses/resp_1?provider=page&include[]=x', { key });
    assert.equal(stored.status, 502, stored.text);
    assert.equal(stored.body.error.code, 'upstream_invalid_content_type');
    assert.ok(!stored.text.includes('<script>'));
    // JSON and its relatives still pass.
    fake.behave({ kind: 'fail', status: 404, body: { error: { message: 'no such response' } } }, 1);
    const missing = await api(t.baseUrl, 'GET', '/api/responses/resp_1?provider=page', { key });
    assert.equal(missing.status, 404, missing.text);
  });
});

describe('upstream connection pools', () => {
  let fake: FakeUpstream;
  before(async () => (fake = await startFakeUpstream()));
  after(() => fake.close());

  it('closes an origin whose pool has been idle, and opens it again when called', async () => {
    const client = new UpstreamClient({ timeoutMs: 30_000, poolIdleMs: 100 });
    const call = () =>
      client.post({
        baseUrl: fake.baseUrl,
        path: '/embeddings',
        auth: { authorization: 'Bearer sk-test' },
        contentType: 'application/json',
        body: JSON.stringify({ model: 'text-embedding-3-small', input: 'hi' }),
      });
    try {
      assert.equal((await call()).status, 200);
      assert.equal(client.openPools, 1);
      for (let waited = 0; client.openPools > 0; waited += 20) {
        assert.ok(waited < 15_000, 'the idle pool was closed');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal((await call()).status, 200);
      assert.equal(client.openPools, 1);
    } finally {
      await client.close();
    }
  });
});
