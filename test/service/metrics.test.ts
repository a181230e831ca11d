/** GET /metrics: Prometheus text, behind GATELOG_METRICS_TOKEN, counting known calls exactly. */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import type { FakeUpstream } from '../support/fake-upstream.js';
import { api, startApp, type Tenant, type TestApp, closeInOrder } from '../support/harness.js';
import { startAppOnFakeUpstream } from '../support/proxy-app.js';

const TOKEN = 'scrape-secret-1';

/** The value of the sample `name{labels}` (labels in any order); undefined when there is none. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const got = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (
      Object.keys(labels).length === Object.keys(got).length &&
      Object.entries(labels).every(([k, v]) => got[k] === v)
    )
      return Number(match[3]);
  }
  return undefined;
}

describe('GET /metrics', () => {
  let t: TestApp;
  let a: Tenant;
  let fake: FakeUpstream;
  before(async () => ({ fake, t, a } = await startAppOnFakeUpstream({ env: { GATELOG_METRICS_TOKEN: TOKEN } })));
  after(() => closeInOrder(t, fake));

  const scrape = async () => {
    const res = await fetch(`${t.baseUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    return res.text();
  };

  it('refuses a missing or wrong token in the envelope', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: TOKEN }] as Record<
      string,
      string
    >[]) {
      const res = await fetch(`${t.baseUrl}/metrics`, { headers });
      assert.equal(res.status, 401);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'invalid_metrics_token');
    }
  });

  it('counts requests by route and status, proxied calls by provider, model and status, and the log writer', async () => {
    const before = await scrape();
    const health = (text: string) =>
      sample(text, 'gatelog_http_requests_total', { method: 'GET', route: '/health', status: '200' }) ?? 0;
    for (let i = 0; i < 3; i++) await fetch(`${t.baseUrl}/health`);
    await fetch(`${t.baseUrl}/api/nope`);
    await api(t.baseUrl, 'POST', '/api/request-logs/create/', { key: a.key, body: { model: 'gpt-4o' } });
    await api(t.baseUrl, 'POST', '/api/request-logs/create/', { key: a.key, body: { model: 'gpt-4o' } });

    const client = new OpenAI({ apiKey: a.key, baseURL: `${t.baseUrl}/api`, maxRetries: 0 });
    const credentials = { customer_credentials: { openai: { api_key: 'sk-metrics' } } };
    await client.embeddings.create({ model: 'text-embedding-3-small', input: 'hi', ...credentials } as never);
    await assert.rejects(client.embeddings.create({ model: 'not-a-model', input: 'hi', ...credentials } as never));
    await t.flush();

    const text = await scrape();
    assert.equal(health(text) - health(before), 3);
    assert.equal(
      sample(text, 'gatelog_http_requests_total', { method: 'GET', route: '(unmatched)', status: '404' }),
      1,
    );
    assert.equal(
      sample(text, 'gatelog_http_requests_total', {
        method: 'POST',
        route: '/api/request-logs/create/',
        status: '201',
      }),
      2,
    );
    const proxied = (model: string, status: string) =>
      sample(text, 'gatelog_proxied_calls_total', { provider: 'openai', model, status });
    assert.equal(proxied('text-embedding-3-small', '200'), 1);
    assert.equal(proxied('not-a-model', '400'), 1);
    // Only the call that went upstream has an upstream time; both have gatelog's own.
    assert.equal(sample(text, 'gatelog_upstream_latency_seconds_count', { provider: 'openai' }), 1);
    assert.equal(sample(text, 'gatelog_added_latency_seconds_count', { provider: 'openai' }), 2);
    assert.ok((sample(text, 'gatelog_added_latency_seconds_sum', { provider: 'openai' }) ?? -1) >= 0);
    assert.equal(sample(text, 'gatelog_logs_written_total'), 4);
    assert.ok((sample(text, 'gatelog_log_batches_total') ?? 0) >= 1);
    assert.equal(sample(text, 'gatelog_log_queue_depth'), 0);
    assert.equal(sample(text, 'gatelog_logs_dropped_total'), 0);
    assert.equal(sample(text, 'gatelog_log_write_retries_total'), 0);
    assert.ok((sample(text, 'gatelog_process_resident_memory_bytes') ?? 0) > 0, 'process metrics');
  });

  it('counts a body its client stopped sending under its route, not as a database error', async () => {
    const databaseErrors = (text: string) =>
      ['busy', 'unavailable', 'query_timeout', 'other']
        .map((kind) => sample(text, 'gatelog_database_errors_total', { kind }) ?? 0)
        .reduce((x, y) => x + y);
    const abandoned = (text: string) =>
      sample(text, 'gatelog_http_requests_total', {
        method: 'POST',
        route: '/api/request-logs/create/',
        status: '499',
      }) ?? 0;
    const before = await scrape();
    const { hostname, port } = new URL(t.baseUrl);
    const socket = net.connect(Number(port), hostname);
    await once(socket, 'connect');
    socket.write(
      `POST /api/request-logs/create/ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${a.key}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"model":',
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.destroy();
    let after = await scrape();
    for (let waited = 0; abandoned(after) === abandoned(before); waited += 50) {
      assert.ok(
        waited < 5000,
        `the abandoned request was never counted: ${after
          .split('\n')
          .filter((l) => l.includes('create') || l.startsWith('gatelog_database'))
          .join('\n')}`,
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      after = await scrape();
    }
    assert.equal(databaseErrors(after), databaseErrors(before));
  });

  it('is open when no token is configured', async () => {
    const open = await startApp();
    try {
      const res = await fetch(`${open.baseUrl}/metrics`);
      assert.equal(res.status, 200);
      assert.match(await res.text(), /# TYPE gatelog_http_requests_total counter/);
    } finally {
      await open.close();
    }
  });
});
