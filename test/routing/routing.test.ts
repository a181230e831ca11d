/**
 * Retries, fallbacks and load balancing (docs/api.md "Retries and fallbacks"), through the official
 * openai client and a fake provider that fails on cue: which failures are tried again and which are not,
 * waits that honour retry-after, a rate-limited key giving way to the provider's next key, fallback
 * models on another provider, never a second try once the answer began, one log per call with its
 * attempts and fallback_used, and the circuit breaker that stops every call waiting on a provider that
 * is down.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { launchChromium, withoutChromium } from '../support/chromium.js';
import { api } from '../support/harness.js';
import { closedPort, logNamedBy, type ProxyTestApp, startProxyApp } from '../support/proxy-app.js';
import { openSignedIn } from '../support/ui-sign-in.js';

type Body = OpenAI.ChatCompletionCreateParamsNonStreaming & Record<string, unknown>;
const hello = (extra: Record<string, unknown> = {}): Body =>
  ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }], ...extra }) as Body;
const retry = (num_retries = 3, retry_after = 0.01) => ({
  retry_params: { retry_enabled: true, num_retries, retry_after },
});

describe('retries and fallbacks', () => {
  let p: ProxyTestApp;
  let down: string;
  let fallbackLogId = '';
  const post = (path: string, body: unknown) => api(p.t.baseUrl, 'POST', path, { key: p.a.key, body });
  const chat = async (body: Body) => {
    const { data, response } = await p.client.chat.completions.create(body).withResponse();
    return { data, log: await logNamedBy(p, response.headers.get('x-gatelog-log-id')) };
  };

  before(async () => {
    p = await startProxyApp();
    down = `http://127.0.0.1:${await closedPort()}/v1`;
    for (const [provider, base_url, models] of [
      ['down', down, ['down-model']],
      ['spare', p.fake.baseUrl, ['spare-model']],
    ] as const) {
      const res = await post('/api/provider-keys/', {
        provider,
        api_key: `${provider}-key-00000001`,
        base_url,
        models,
      });
      assert.equal(res.status, 201, res.text);
    }
  });
  after(async () => {
    await p?.close();
  });

  it('retries a 5xx until it answers, logging each failed try', async () => {
    p.fake.behave({ kind: 'fail', status: 500, body: { error: { message: 'boom' } } }, 2);
    const seen = p.fake.chats.length + p.fake.requests.length;
    const { data, log } = await chat(hello(retry()));
    assert.equal(data.choices[0].message.content, 'Hello, world!');
    assert.equal(p.fake.requests.length + p.fake.chats.length - seen >= 3, true);
    assert.equal(log.status_code, 200);
    assert.deepEqual(
      log.attempts.map((a: { status_code: number; error: string; provider: string }) => [
        a.status_code,
        a.error,
        a.provider,
      ]),
      [
        [500, 'boom', 'openai'],
        [500, 'boom', 'openai'],
      ],
    );
    assert.equal(log.fallback_used, false);
  });

  it('does not retry without retry_params, nor a 4xx other than 408, 409 and 429', async () => {
    p.fake.behave({ kind: 'fail', status: 500, body: { error: { message: 'once' } } }, 1);
    await assert.rejects(p.client.chat.completions.create(hello()), (err: { status: number }) => err.status === 500);
    const before400 = p.fake.requests.length;
    p.fake.behave({ kind: 'fail', status: 400, body: { error: { message: 'bad request' } } }, 1);
    await assert.rejects(
      p.client.chat.completions.create(hello(retry())),
      (err: { status: number }) => err.status === 400,
    );
    assert.equal(p.fake.requests.length - before400, 1);
  });

  it("waits for the provider's retry-after when it is longer than retry_after", async () => {
    p.fake.behave(
      { kind: 'fail', status: 503, body: { error: { message: 'later' } }, headers: { 'retry-after': '1' } },
      1,
    );
    const started = performance.now();
    const { log } = await chat(hello(retry(1, 0.01)));
    assert.ok(performance.now() - started >= 950, `answered after ${performance.now() - started} ms`);
    assert.equal(log.attempts.length, 1);
    assert.equal(log.attempts[0].status_code, 503);
  });

  it('moves to a fallback model on another provider when the first is unreachable', async () => {
    const { data, log } = await chat(hello({ model: 'down-model', fallback_models: ['spare-model'] }));
    assert.equal(data.choices[0].message.content, 'Hello, world!');
    assert.equal(log.model, 'spare-model');
    assert.equal(log.provider_id, 'spare');
    assert.equal(log.fallback_used, true);
    fallbackLogId = log.unique_id;
    assert.equal(log.attempts.length, 1);
    assert.deepEqual(
      [log.attempts[0].provider, log.attempts[0].model, log.attempts[0].status_code],
      ['down', 'down-model', 502],
    );
    // fallback_used is a filter.
    const found = await post('/api/request-logs/list/', { filters: { fallback_used: { value: [true] } } });
    assert.ok(found.body.results.some((r: { unique_id: string }) => r.unique_id === log.unique_id));
  });

  it('keeps to the first model with disable_fallback', async () => {
    await assert.rejects(
      p.client.chat.completions.create(
        hello({ model: 'down-model', fallback_models: ['spare-model'], disable_fallback: true }),
      ),
      (err: { status: number }) => err.status === 502,
    );
  });

  it('never tries again once the stream began', async () => {
    p.fake.behave({ kind: 'stream-reset', after: 1 }, 1);
    const before = p.fake.chats.length;
    const stream = await p.client.chat.completions.create({
      ...hello({ fallback_models: ['spare-model'], ...retry() }),
      stream: true,
    } as OpenAI.ChatCompletionCreateParamsStreaming);
    await assert.rejects(async () => {
      for await (const chunk of stream) void chunk;
    });
    assert.equal(p.fake.chats.length - before, 1);
  });

  it('tries the next key of a provider that answered 429, without waiting', async () => {
    for (const key_id of ['first', 'second']) {
      const res = await post('/api/provider-keys/', {
        provider: 'spare',
        api_key: `spare-${key_id}-key-0001`,
        key_id,
        base_url: p.fake.baseUrl,
        models: ['spare-model'],
      });
      assert.equal(res.status, 201, res.text);
    }
    await api(p.t.baseUrl, 'DELETE', '/api/provider-keys/spare/keys/default/', { key: p.a.key });
    await new Promise((resolve) => setTimeout(resolve, 1100)); // the key cache's second
    p.fake.behave(
      { kind: 'fail', status: 429, body: { error: { message: 'slow down' } }, headers: { 'retry-after': '30' } },
      1,
    );
    const seen = p.fake.chats.length;
    const started = performance.now();
    const { log } = await chat(hello({ model: 'spare-model' }));
    assert.ok(performance.now() - started < 5000, 'no wait for the retry-after of the key that was limited');
    const keys = p.fake.requests.slice(-2).map((r) => r.headers.authorization);
    assert.equal(new Set(keys).size, 2, `two keys used: ${keys}`);
    assert.equal(log.attempts.length, 1);
    assert.equal(log.attempts[0].status_code, 429);
    assert.ok(p.fake.chats.length > seen);
  });

  it('spreads calls over a load-balance group by weight', async () => {
    const models = new Set<string>();
    for (let i = 0; i < 16; i++) {
      const { log } = await chat(
        hello({
          load_balance_group: {
            models: [
              { model: 'gpt-4o-mini', weight: 1 },
              { model: 'gpt-4o', weight: 1 },
            ],
          },
        }),
      );
      models.add(log.model);
    }
    assert.deepEqual([...models].sort(), ['gpt-4o', 'gpt-4o-mini']);
  });

  it('refuses malformed routing parameters with a 400 naming the field', async () => {
    for (const [extra, param] of [
      [{ retry_params: { num_retries: 2 } }, 'retry_params.retry_enabled'],
      [{ retry_params: { retry_enabled: true, num_retries: 0 } }, 'retry_params.num_retries'],
      [{ retry_params: { retry_enabled: true, retry_after: -1 } }, 'retry_params.retry_after'],
      [{ fallback_models: 'gpt-4o' }, 'fallback_models'],
      [{ fallback_models: ['gpt-4o', 7] }, 'fallback_models[1]'],
      [{ fallback_models: ['no-such-model'] }, 'fallback_models[0]'],
      [{ load_balance_group: { models: [{ model: 'gpt-4o', weight: 0 }] } }, 'load_balance_group.models[0].weight'],
      [{ disable_fallback: 'yes' }, 'disable_fallback'],
    ] as const) {
      const res = await post('/api/chat/completions', hello(extra));
      assert.equal(res.status, 400, `${JSON.stringify(extra)}: ${res.text}`);
      assert.equal(res.body.error.param, param, JSON.stringify(extra));
    }
  });

  it('shows the attempts and the fallback in the web UI', { skip: withoutChromium }, async () => {
    assert.ok(fallbackLogId);
    const browser = await launchChromium();
    try {
      const page = await openSignedIn(browser, p.t.baseUrl, p.a.key, `/ui/?log=${fallbackLogId}`);
      const dialog = page.getByRole('dialog', { name: 'Log detail' });
      const attempts = dialog.getByRole('region', { name: 'Attempts' });
      await attempts.waitFor();
      assert.match(await attempts.locator('h3').innerText(), /Attempts before the answer \(1\)/);
      const row = (await attempts.locator('tbody tr').innerText()).replace(/\s+/g, ' ');
      assert.match(row, /^down · down-model 502 The provider could not be reached: ECONNREFUSED 127\.0\.0\.1:\d+\. \d/);
      const facts = (await dialog.locator('dl.facts').innerText()).replace(/\n=\n≠\n/g, '\n');
      assert.match(facts, /\nFallback\na fallback model answered\n/);
    } finally {
      await browser.close();
    }
  });

  it('retries embeddings too', async () => {
    p.fake.behave({ kind: 'fail', status: 502, body: { error: { message: 'bad gateway' } } }, 1);
    const { data, response } = await p.client.embeddings
      .create({ model: 'text-embedding-3-small', input: ['a'], ...retry() } as OpenAI.EmbeddingCreateParams)
      .withResponse();
    assert.equal(data.data.length, 1);
    const log = await logNamedBy(p, response.headers.get('x-gatelog-log-id'));
    assert.equal(log.attempts.length, 1);
  });
});

describe('a provider that hangs', () => {
  let p: ProxyTestApp;
  before(async () => {
    p = await startProxyApp({ GATELOG_UPSTREAM_TIMEOUT_MS: '300' });
  });
  after(async () => {
    await p?.close();
  });

  it('is tried again after its timeout, and the log keeps the 504 attempt', async () => {
    p.fake.behave({ kind: 'hang' }, 1);
    const { data, response } = await p.client.chat.completions
      .create(hello({ retry_params: { retry_enabled: true, num_retries: 1, retry_after: 0.01 } }))
      .withResponse();
    assert.equal(data.choices[0].message.content, 'Hello, world!');
    const log = await logNamedBy(p, response.headers.get('x-gatelog-log-id'));
    assert.equal(log.status_code, 200);
    assert.deepEqual(
      log.attempts.map((a: { status_code: number }) => a.status_code),
      [504],
    );
    assert.ok(log.attempts[0].latency >= 0.29, `the attempt waited its timeout: ${log.attempts[0].latency}`);
  });
});

describe('the circuit breaker', () => {
  let p: ProxyTestApp;
  before(async () => {
    p = await startProxyApp({ GATELOG_CIRCUIT_FAILURES: '2', GATELOG_CIRCUIT_COOLDOWN_MS: '60000' });
    const down = `http://127.0.0.1:${await closedPort()}/v1`;
    const res = await api(p.t.baseUrl, 'POST', '/api/provider-keys/', {
      key: p.a.key,
      body: { provider: 'down', api_key: 'down-key-00000001', base_url: down, models: ['down-model'] },
    });
    assert.equal(res.status, 201, res.text);
  });
  after(async () => {
    await p?.close();
  });

  it('skips a provider that failed in a row, answers from the fallback at once, and reports it', async () => {
    for (let i = 0; i < 2; i++) {
      await assert.rejects(
        p.client.chat.completions.create(hello({ model: 'down-model' })),
        (err: { status: number }) => err.status === 502,
      );
    }
    // Open: no try at all, even with retries asked for.
    await assert.rejects(
      p.client.chat.completions.create(hello({ model: 'down-model', ...retry(5, 1) })),
      (err: { status: number; code: string }) => err.status === 503 && err.code === 'provider_unavailable',
    );
    const { data, response } = await p.client.chat.completions
      .create(hello({ model: 'down-model', fallback_models: ['gpt-4o-mini'] }))
      .withResponse();
    assert.equal(data.choices[0].message.content, 'Hello, world!');
    const log = await logNamedBy(p, response.headers.get('x-gatelog-log-id'));
    assert.equal(log.fallback_used, true);
    assert.equal(log.attempts[0].status_code, 503);
    const metrics = await fetch(`${p.t.baseUrl}/metrics`).then((r) => r.text());
    assert.match(metrics, /gatelog_circuit_open\{upstream="127\.0\.0\.1:\d+"\} 1/);
    assert.match(metrics, /gatelog_circuit_skipped_total [1-9]/);
  });

  it("never lets one organization's failures switch a shared upstream off for another", async () => {
    // Two organizations calling the same upstream (the default OpenAI base URL, the fake).
    const clients = [];
    for (let i = 0; i < 2; i++) {
      const tenant = await p.t.tenant();
      const res = await api(p.t.baseUrl, 'POST', '/api/provider-keys/', {
        key: tenant.key,
        body: { provider: 'openai', api_key: `sk-tenant-${i}-000001` },
      });
      assert.equal(res.status, 201, res.text);
      clients.push(new OpenAI({ apiKey: tenant.key, baseURL: `${p.t.baseUrl}/api`, maxRetries: 0 }));
    }
    const [a, b] = clients;
    // A's requests make the provider answer 5xx, as many times as the threshold.
    p.fake.behave({ kind: 'fail', status: 500, body: { error: { message: 'your request broke me' } } }, 2);
    for (let i = 0; i < 2; i++) {
      await assert.rejects(a.chat.completions.create(hello()), (err: { status: number }) => err.status === 500);
    }
    // A's circuit is open: its next call skips the upstream without trying it.
    const seen = p.fake.chats.length;
    await assert.rejects(
      a.chat.completions.create(hello()),
      (err: { status: number; code: string }) => err.status === 503 && err.code === 'provider_unavailable',
    );
    assert.equal(p.fake.chats.length, seen, 'no try while open');
    // B's ordinary calls are answered, every one of them, and reach the upstream.
    for (let i = 0; i < 3; i++) {
      const data = await b.chat.completions.create(hello());
      assert.equal(data.choices[0].message.content, 'Hello, world!');
    }
    assert.equal(p.fake.chats.length, seen + 3);
  });
});
