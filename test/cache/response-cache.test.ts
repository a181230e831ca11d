/**
 * The response cache (docs/api.md "Response cache", "Settings") through the official openai client: a
 * chat answer stored once whole and answered again without the provider — as JSON or as a replayed
 * stream, whichever form stored it — with X-Gatelog-Cache, the hit's log (cache_hit, cost 0, the usage
 * as it was), the canonical key, cache_by_customer, TTL expiry, organizations apart, omit_log, errors never
 * stored, DELETE /api/cache/ and the organization's defaults in /api/settings/.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { api } from '../support/harness.js';
import { logNamedBy, PROVIDER_KEY, type ProxyTestApp, startProxyApp } from '../support/proxy-app.js';

type Body = OpenAI.ChatCompletionCreateParamsNonStreaming & Record<string, unknown>;

describe('the response cache', () => {
  let p: ProxyTestApp;
  let n = 0;
  /** A question no other test asks, so that each test starts from a miss. */
  const fresh = () => `Question ${++n} at ${Date.now()}`;
  const ask = (content: string, extra: Record<string, unknown> = {}): Body =>
    ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], cache_enabled: true, ...extra }) as Body;
  const chat = async (body: Body, client = p.client) => {
    const { data, response } = await client.chat.completions.create(body).withResponse();
    await p.t.flush();
    return { data, cache: response.headers.get('x-gatelog-cache'), logId: response.headers.get('x-gatelog-log-id') };
  };
  /** Waits for the cache's writes (they follow the answer). */
  const stored = () => new Promise((resolve) => setTimeout(resolve, 150));

  before(async () => {
    p = await startProxyApp();
  });
  after(async () => {
    await p?.close();
  });

  it('answers the same call again from the cache, without the provider, and logs it as a hit', async () => {
    const body = ask(fresh());
    const first = await chat(body);
    assert.equal(first.cache, 'MISS');
    await stored();
    const calls = p.fake.chats.length;
    const second = await chat(body);
    assert.equal(second.cache, 'HIT');
    assert.equal(p.fake.chats.length, calls, 'the provider was not called');
    assert.deepEqual(second.data, first.data);
    const miss = await logNamedBy(p, first.logId);
    const hit = await logNamedBy(p, second.logId);
    assert.equal(miss.cache_hit, false);
    assert.ok(miss.cost > 0);
    assert.equal(hit.cache_hit, true);
    assert.equal(hit.cost, 0);
    assert.equal(hit.prompt_tokens, miss.prompt_tokens);
    assert.equal(hit.completion_tokens, miss.completion_tokens);
    const found = await api(p.t.baseUrl, 'POST', '/api/request-logs/list/', {
      key: p.a.key,
      body: { filters: { cache_hit: { value: [true] } } },
    });
    assert.ok(found.body.results.some((r: { unique_id: string }) => r.unique_id === hit.unique_id));
  });

  it('replays a stored answer as a stream, and stores a streamed answer for a JSON call', async () => {
    const content = fresh();
    await chat(ask(content));
    await stored();
    const calls = p.fake.chats.length;
    const stream = await p.client.chat.completions
      .create({
        ...ask(content),
        stream: true,
        stream_options: { include_usage: true },
      } as OpenAI.ChatCompletionCreateParamsStreaming)
      .withResponse();
    assert.equal(stream.response.headers.get('x-gatelog-cache'), 'HIT');
    let text = '';
    let finish: string | null = null;
    let usage: unknown = null;
    for await (const chunk of stream.data) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, 'Hello, world!');
    assert.equal(finish, 'stop');
    assert.ok(usage, 'the usage event the client asked for');
    assert.equal(p.fake.chats.length, calls);

    // The other way: a stream read to its end is stored, and a JSON call gets it whole.
    const other = fresh();
    const streamed = await p.client.chat.completions.create({
      ...ask(other),
      stream: true,
    } as OpenAI.ChatCompletionCreateParamsStreaming);
    for await (const chunk of streamed) void chunk;
    await stored();
    const json = await chat(ask(other));
    assert.equal(json.cache, 'HIT');
    assert.equal(json.data.choices[0].message.content, 'Hello, world!');
  });

  it('keys by the request, not its field order nor its metadata; cache_by_customer keeps customers apart', async () => {
    const content = fresh();
    await chat(ask(content, { metadata: { run: 1 }, temperature: 0.5, customer_identifier: 'a' }));
    await stored();
    const reordered = {
      temperature: 0.5,
      cache_enabled: true,
      messages: [{ content, role: 'user' }],
      model: 'gpt-4o-mini',
      metadata: { run: 2 },
      customer_identifier: 'b',
    } as unknown as Body;
    assert.equal((await chat(reordered)).cache, 'HIT');
    assert.equal((await chat(ask(content, { temperature: 0.6 }))).cache, 'MISS');
    const byCustomer = { cache_options: { cache_by_customer: true } };
    await chat(ask(content, { temperature: 0.5, customer_identifier: 'a', ...byCustomer }));
    await stored();
    assert.equal(
      (await chat(ask(content, { temperature: 0.5, customer_identifier: 'a', ...byCustomer }))).cache,
      'HIT',
    );
    assert.equal(
      (await chat(ask(content, { temperature: 0.5, customer_identifier: 'b', ...byCustomer }))).cache,
      'MISS',
    );
  });

  it('forgets an answer after its cache_ttl', async () => {
    const body = ask(fresh(), { cache_ttl: 1 });
    await chat(body);
    await stored();
    assert.equal((await chat(body)).cache, 'HIT');
    await new Promise((resolve) => setTimeout(resolve, 1100));
    assert.equal((await chat(body)).cache, 'MISS');
  });

  it('never shares an entry between organizations', async () => {
    const body = ask(fresh());
    await chat(body);
    await stored();
    const other = await p.t.tenant();
    const res = await api(p.t.baseUrl, 'POST', '/api/provider-keys/', {
      key: other.key,
      body: { provider: 'openai', api_key: PROVIDER_KEY },
    });
    assert.equal(res.status, 201);
    const client = new OpenAI({ apiKey: other.key, baseURL: `${p.t.baseUrl}/api`, maxRetries: 0 });
    assert.equal((await chat(body, client)).cache, 'MISS');
  });

  it('writes no log for a hit with omit_log, and request_breakdown says cached', async () => {
    const body = ask(fresh(), { cache_options: { omit_log: true }, request_breakdown: true });
    await chat(body);
    await stored();
    const hit = await chat(body);
    assert.equal(hit.cache, 'HIT');
    assert.equal((hit.data as unknown as { request_breakdown: { cached: boolean } }).request_breakdown.cached, true);
    const res = await api(p.t.baseUrl, 'GET', `/api/request-logs/${hit.logId}/`, { key: p.a.key });
    assert.equal(res.status, 404);
  });

  it('never stores an error, and empties on DELETE /api/cache/', async () => {
    const body = ask(fresh());
    p.fake.behave({ kind: 'fail', status: 500, body: { error: { message: 'boom' } } }, 1);
    await assert.rejects(chat(body));
    await stored();
    assert.equal((await chat(body)).cache, 'MISS');
    await stored();
    assert.equal((await chat(body)).cache, 'HIT');
    const cleared = await api(p.t.baseUrl, 'DELETE', '/api/cache/', { key: p.a.key });
    assert.equal(cleared.status, 200);
    assert.ok(cleared.body.deleted >= 1);
    assert.equal((await chat(body)).cache, 'MISS');
  });

  it("takes the organization's settings as the default, a call's own parameter over them", async () => {
    const get = await api(p.t.baseUrl, 'GET', '/api/settings/', { key: p.a.key });
    assert.deepEqual(get.body, {
      cache_enabled: false,
      cache_ttl: 2592000,
      cache_options: { cache_by_customer: false, omit_log: false },
      retention_days: null,
      content_retention_days: null,
    });
    const patched = await api(p.t.baseUrl, 'PATCH', '/api/settings/', { key: p.a.key, body: { cache_enabled: true } });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.cache_enabled, true);
    assert.equal(patched.body.cache_ttl, 2592000);
    const content = fresh();
    const plain = { model: 'gpt-4o-mini', messages: [{ role: 'user', content }] } as Body;
    assert.equal((await chat(plain)).cache, 'MISS');
    await stored();
    assert.equal((await chat(plain)).cache, 'HIT');
    assert.equal((await chat({ ...plain, cache_enabled: false } as Body)).cache, null);
    for (const [body, param] of [
      [{ cache_ttl: 0 }, 'cache_ttl'],
      [{ cache_options: { omit: true } }, 'cache_options'],
      [{ retention: 3 }, null],
    ] as const) {
      const res = await api(p.t.baseUrl, 'PATCH', '/api/settings/', { key: p.a.key, body });
      assert.equal(res.status, 400, JSON.stringify(body));
      if (param) assert.match(String(res.body.error.param), new RegExp(`^${param}`));
    }
    await api(p.t.baseUrl, 'PATCH', '/api/settings/', { key: p.a.key, body: { cache_enabled: false } });
  });
});
