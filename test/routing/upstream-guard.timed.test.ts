/**
 * What gatelog lets an upstream be and do: no calls to itself, only allowed hosts when the operator
 * says so, and no answer larger than the configured limit held in memory.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import type { FakeUpstream } from '../support/fake-upstream.js';
import { api, type TestApp, closeInOrder } from '../support/harness.js';
import { whilePolling, stallBoundMs } from '../support/responsive.js';
import { startAppOnFakeUpstream } from '../support/proxy-app.js';

const embed = (t: TestApp, key: string, input: unknown = 'hello') =>
  api(t.baseUrl, 'POST', '/api/embeddings', { key, body: { model: 'text-embedding-3-small', input } });

describe('upstream guards', () => {
  let fake: FakeUpstream;
  let t: TestApp;
  before(async () => {
    ({ fake, t } = await startAppOnFakeUpstream({
      env: { GATELOG_UPSTREAM_ALLOWED_HOSTS: '127.0.0.1, localhost', GATELOG_UPSTREAM_MAX_RESPONSE_BYTES: '60000' },
    }));
  });
  after(() => closeInOrder(t, fake));

  it('refuses a call that comes back to this gatelog (base_url pointing at itself) with 508, once', async () => {
    const { key } = await t.tenant();
    const registered = await api(t.baseUrl, 'POST', '/api/provider-keys/', {
      key,
      body: { provider: 'openai', api_key: key, base_url: `${t.baseUrl}/api` },
    });
    assert.equal(registered.status, 201);
    const { result: res, slowestMs } = await whilePolling(t.baseUrl, () => embed(t, key));
    assert.ok(slowestMs < stallBoundMs(), `/health took ${slowestMs.toFixed(0)} ms meanwhile`);
    assert.equal(res.status, 508);
    assert.equal(res.body.error.code, 'proxy_loop');
    await t.flush();
    // The caller's call and the one that came back: two calls, two logs, no more.
    const logs = await api(t.baseUrl, 'GET', '/api/request-logs/list/', { key });
    assert.deepEqual(
      logs.body.results.map((l: { status_code: number }) => l.status_code),
      [508, 508],
    );
  });

  it('lets base_url name only the allowed hosts when GATELOG_UPSTREAM_ALLOWED_HOSTS is set', async () => {
    const { key } = await t.tenant();
    const res = await api(t.baseUrl, 'POST', '/api/provider-keys/', {
      key,
      body: { provider: 'openai', api_key: 'sk-x', base_url: 'http://10.1.2.3:8000/v1' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'base_url');
    assert.equal(res.body.error.code, 'upstream_host_not_allowed');
    const ok = await api(t.baseUrl, 'POST', '/api/provider-keys/', {
      key,
      body: { provider: 'openai', api_key: 'sk-x', base_url: `${fake.baseUrl}` },
    });
    assert.equal(ok.status, 201);
    assert.throws(
      () =>
        loadConfig({
          GATELOG_DATABASE_URL: ':memory:',
          GATELOG_UPSTREAM_ALLOWED_HOSTS: 'models.internal',
        }),
      /GATELOG_UPSTREAM_ALLOWED_HOSTS/,
    );
  });

  it('refuses an answer over GATELOG_UPSTREAM_MAX_RESPONSE_BYTES with a 502 naming the limit', async () => {
    const { key } = await t.tenant();
    await api(t.baseUrl, 'POST', '/api/provider-keys/', { key, body: { provider: 'openai', api_key: 'sk-x' } });
    const small = await embed(t, key, 'one');
    assert.equal(small.status, 200, small.text);
    const { result: large, slowestMs } = await whilePolling(t.baseUrl, () =>
      embed(t, key, ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']),
    );
    assert.ok(slowestMs < stallBoundMs(), `/health took ${slowestMs.toFixed(0)} ms meanwhile`);
    assert.equal(large.status, 502);
    assert.equal(large.body.error.code, 'upstream_response_too_large');
    assert.match(large.body.error.message, /GATELOG_UPSTREAM_MAX_RESPONSE_BYTES/);
    await t.flush();
    const logs = await api(t.baseUrl, 'GET', '/api/request-logs/list/', { key });
    assert.deepEqual(
      logs.body.results.map((l: { status_code: number }) => l.status_code),
      [502, 200],
    );
  });
});
