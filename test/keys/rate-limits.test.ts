/**
 * Rate limits on proxied calls (docs/api.md "Rate limits"), through the official openai client: a key's
 * requests and tokens per minute, a customer's and the organization's (set through /api/rate-limits/),
 * OpenAI's x-ratelimit-* headers for the tightest limit, 429 rate_limited with retry-after, nothing
 * forwarded and one failed log for each refusal; tokens reserved at admission and corrected when the
 * call ends.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { AdmissionLedger } from '../../src/admission/admission-ledger.js';
import { Ledger } from '../../src/budgets/ledger.js';
import { Buckets } from '../../src/limits/buckets.js';
import { WINDOW_MS } from '../../src/limits/draw.js';
import { api, type Tenant } from '../support/harness.js';
import { PROVIDER_KEY, type ProxyTestApp, registerProviderKey, startProxyApp } from '../support/proxy-app.js';

type Limits = { requests_per_minute?: number; tokens_per_minute?: number };

describe('rate limits on proxied calls', () => {
  let p: ProxyTestApp;

  /** A key of `who`'s organization with `rate_limits`, as an openai client that never retries. */
  const limitedClient = async (name: string, rateLimits: Limits, who: Tenant = p.a) => {
    const made = await api(p.t.baseUrl, 'POST', '/api/keys/', {
      key: who.key,
      body: { name, scopes: ['models', 'read'], rate_limits: rateLimits },
    });
    assert.equal(made.status, 201, made.text);
    return new OpenAI({ apiKey: made.body.key, baseURL: `${p.t.baseUrl}/api`, maxRetries: 0 });
  };
  const ask = (client: OpenAI, extra: Record<string, unknown> = {}) =>
    client.chat.completions
      .create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'hi' }],
        ...extra,
      } as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .withResponse();
  /** The 429 a call met, after checking nothing reached the provider. */
  const limited = async (call: Promise<unknown>): Promise<InstanceType<typeof OpenAI.RateLimitError>> => {
    const forwarded = p.fake.chats.length;
    const err = await call.then(
      () => assert.fail('the call was not refused'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof OpenAI.RateLimitError, String(err));
    assert.equal(err.code, 'rate_limited');
    assert.equal(p.fake.chats.length, forwarded, 'nothing was forwarded');
    return err;
  };
  const retryAfter = (err: InstanceType<typeof OpenAI.RateLimitError>) => Number(err.headers?.get('retry-after'));

  before(async () => {
    p = await startProxyApp();
  });
  after(async () => p.close());

  it("counts a key's requests, says what is left, and refuses the one too many with retry-after", async () => {
    const client = await limitedClient('three a minute', { requests_per_minute: 3 });
    for (const left of [2, 1, 0]) {
      const { response } = await ask(client);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('x-ratelimit-limit-requests'), '3');
      assert.equal(response.headers.get('x-ratelimit-remaining-requests'), String(left));
      assert.match(response.headers.get('x-ratelimit-reset-requests') ?? '', /^\d+(\.\d+)?(ms|s)$|^1m0s$/);
      assert.equal(response.headers.get('x-ratelimit-limit-tokens'), null, 'no token limit, no token headers');
    }
    const err = await limited(ask(client));
    assert.match(err.message, /this key: 3 requests per minute/);
    // One request frees every 20 s; the first of the three was drawn moments ago.
    assert.ok(retryAfter(err) >= 1 && retryAfter(err) <= 20, `retry-after ${retryAfter(err)}`);
    assert.ok(Number(err.headers?.get('retry-after-ms')) <= retryAfter(err) * 1000);
    assert.equal(err.headers?.get('x-ratelimit-remaining-requests'), '0');

    const logId = err.headers?.get('x-gatelog-log-id');
    assert.ok(logId, 'the refusal names its log');
    await p.t.flush();
    const log = await api(p.t.baseUrl, 'GET', `/api/request-logs/${logId}/`, { key: p.a.key });
    assert.equal(log.status, 200, log.text);
    assert.equal(log.body.status_code, 429);
    assert.match(log.body.error_message, /Rate limit reached for this key/);
  });

  it('reserves tokens at admission and gives back what a call did not use', async () => {
    const client = await limitedClient('a thousand tokens', { tokens_per_minute: 1000 });
    // A stream held open holds its reservation: the prompt (2 bytes: a short prompt counts its bytes) and 900 of output.
    p.fake.chat({ firstEventDelayMs: 60_000 });
    const abort = new AbortController();
    const held = await client.chat.completions
      .create(
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 900, stream: true },
        { signal: abort.signal },
      )
      .withResponse();
    assert.equal(held.response.headers.get('x-ratelimit-limit-tokens'), '1000');
    assert.equal(held.response.headers.get('x-ratelimit-remaining-tokens'), '98');
    p.fake.chat();

    const err = await limited(ask(client, { max_tokens: 200 }));
    assert.match(err.message, /1000 tokens per minute/);
    assert.ok(retryAfter(err) >= 1 && retryAfter(err) <= 60, `retry-after ${retryAfter(err)}`);

    // The held call ends without an answer: its reservation is given back whole.
    abort.abort();
    await waitForLogOf(p, held.response.headers.get('x-gatelog-log-id'), 499);
    await p.t.limits.settled();
    const { response } = await ask(client, { max_tokens: 900 });
    assert.equal(response.status, 200);

    // That call used 23 tokens of the 902 reserved: once corrected, 900 more fit again.
    await p.t.flush();
    await p.t.limits.settled();
    const again = await ask(client, { max_tokens: 900 });
    assert.equal(again.response.status, 200);
  });

  it('refuses a call larger than a whole minute of tokens, telling the client not to retry', async () => {
    const client = await limitedClient('five hundred tokens', { tokens_per_minute: 500 });
    const err = await limited(ask(client, { max_tokens: 2000 }));
    assert.match(err.message, /up to 2002 tokens, more than the 500 tokens per minute of this key/);
    assert.equal(err.headers?.get('x-should-retry'), 'false');
  });

  it("limits a customer's calls, whichever key makes them", async () => {
    const made = await api(p.t.baseUrl, 'POST', '/api/rate-limits/', {
      key: p.a.key,
      body: { applies_to: { type: 'customer', value: 'acme' }, requests_per_minute: 2 },
    });
    assert.equal(made.status, 201, made.text);
    const clients = [await limitedClient('customer one', {}), await limitedClient('customer two', {})];
    for (const client of clients) {
      const { response } = await ask(client, { customer_identifier: 'acme' });
      assert.equal(response.headers.get('x-ratelimit-limit-requests'), '2');
    }
    const err = await limited(ask(clients[0], { customer_identifier: 'acme' }));
    assert.match(err.message, /the customer 'acme': 2 requests per minute/);
    const other = await ask(clients[0], { customer_identifier: 'globex' });
    assert.equal(other.response.status, 200);
    assert.equal(other.response.headers.get('x-ratelimit-limit-requests'), null, 'no limit applies to globex');
  });

  it("holds the organization's limit, and a call refused by one limit takes nothing from the others", async () => {
    const b = await p.t.tenant();
    await registerProviderKey(p.t, b.key, { provider: 'openai', api_key: PROVIDER_KEY });
    const made = await api(p.t.baseUrl, 'POST', '/api/rate-limits/', {
      key: b.key,
      body: { applies_to: { type: 'organization' }, requests_per_minute: 1 },
    });
    assert.equal(made.status, 201, made.text);
    assert.deepEqual(made.body.applies_to, { type: 'organization', value: b.org.id });
    const client = await limitedClient('five a minute', { requests_per_minute: 5 }, b);

    const first = await ask(client);
    // The tightest limit is the organization's: one a minute, none left.
    assert.equal(first.response.headers.get('x-ratelimit-limit-requests'), '1');
    assert.equal(first.response.headers.get('x-ratelimit-remaining-requests'), '0');
    const err = await limited(ask(client));
    assert.match(err.message, /the organization: 1 requests per minute/);

    const removed = await api(p.t.baseUrl, 'DELETE', `/api/rate-limits/${made.body.id}/`, { key: b.key });
    assert.equal(removed.status, 204, removed.text);
    // The key drew one for the first call only: four more pass, then its own limit refuses.
    for (const left of [3, 2, 1, 0]) {
      const { response } = await ask(client);
      assert.equal(response.headers.get('x-ratelimit-remaining-requests'), String(left));
    }
    assert.match((await limited(ask(client))).message, /this key: 5 requests per minute/);
  });
});

describe('rate-limit buckets', () => {
  it('forgets a bucket once it has drained, and only then', async () => {
    const p = await startProxyApp();
    try {
      const buckets = new Buckets(p.t.db);
      const admission = new AdmissionLedger(p.t.db, new Ledger(p.t.db), buckets);
      const now = Date.now();
      const draw = (bucket: string, at: number) =>
        admission.take([
          { kind: 'bucket', bucket, now: at, draw: { requestsMs: 1000, tokensMs: 0 }, limit: at + WINDOW_MS },
        ]);
      assert.ok((await draw('key:drained long ago', now - 5 * WINDOW_MS)).taken);
      assert.ok((await draw('key:in use', now)).taken);
      assert.equal(await buckets.sweep(now - WINDOW_MS), 1);
      const left = await p.t.db.db.selectFrom('rate_buckets').select('bucket').execute();
      assert.deepEqual(
        left.map((r) => r.bucket),
        ['key:in use'],
      );
    } finally {
      await p.close();
    }
  });
});

/** Waits until the log `logId` is written with `status`. */
async function waitForLogOf(p: ProxyTestApp, logId: string | null, status: number): Promise<void> {
  assert.ok(logId, 'the answer names its log');
  for (;;) {
    await p.t.flush();
    const log = await api(p.t.baseUrl, 'GET', `/api/request-logs/${logId}/`, { key: p.a.key });
    if (log.status === 200 && log.body.status_code === status) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
