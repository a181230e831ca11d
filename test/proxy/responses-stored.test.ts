/**
 * The stored-response routes: GET|DELETE /api/responses/{id}, its input_items, its event stream,
 * cancel — asked of the provider with the registered key (or the one a `provider` parameter names).
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import OpenAI from 'openai';
import { api, type Tenant, type TestApp } from '../support/harness.js';
import { type FakeUpstream } from '../support/fake-upstream.js';
import { PROVIDER_KEY, type ProxyTestApp, startProxyApp } from '../support/proxy-app.js';
import { readSse } from '../support/sse.js';
import { HELLO } from './responses-fixtures.js';

describe('the stored-response routes: GET|DELETE /api/responses/{id}, input_items, cancel', () => {
  let p: ProxyTestApp;
  let fake: FakeUpstream;
  let t: TestApp;
  let a: Tenant;
  let client: OpenAI;
  /** The URL of the last call the official client made to gatelog. */
  let lastUrl = '';

  const logCount = async () => {
    await t.flush();
    const res = await api(t.baseUrl, 'GET', '/api/request-logs/list/?page_size=1', { key: a.key });
    assert.equal(res.status, 200, res.text);
    return res.body.count as number;
  };

  before(async () => {
    p = await startProxyApp();
    ({ fake, t, a } = p);
    client = new OpenAI({
      apiKey: a.key,
      baseURL: `${t.baseUrl}/api`,
      maxRetries: 0,
      fetch: (url: string | URL | Request, init?: RequestInit) => {
        lastUrl = String(url);
        return fetch(url, init);
      },
    });
  });
  beforeEach(() => {
    fake.behave({ kind: 'ok' });
    fake.respond();
  });
  after(() => p.close());

  it('retrieves, lists input items and deletes through the provider, with the registered key, and logs none', async () => {
    const created = await client.responses.create({
      model: 'gpt-4o-mini',
      input: [
        { role: 'user', content: 'one' },
        { role: 'assistant', content: 'two' },
        { role: 'user', content: 'three' },
      ],
    });
    const logs = await logCount();

    const retrieved = await client.responses
      .retrieve(created.id, { include: ['message.output_text.logprobs'] })
      .withResponse();
    assert.deepEqual(retrieved.data, created);
    assert.equal(retrieved.response.headers.get('x-gatelog-log-id'), null, 'no log');
    assert.equal(retrieved.response.headers.get('x-request-id'), `req_${fake.requests.length}`);
    const sent = fake.requests.at(-1)!;
    assert.equal(sent.method, 'GET');
    assert.equal(sent.path, `/v1/responses/${created.id}`);
    assert.equal(sent.headers.authorization, `Bearer ${PROVIDER_KEY}`);
    assert.equal(new URL(sent.url, 'http://x').search, new URL(lastUrl).search, 'the query, as the client wrote it');

    const texts: string[] = [];
    for await (const item of client.responses.inputItems.list(created.id, { limit: 2, order: 'asc' })) {
      assert.ok(item.type === 'message');
      texts.push((item.content[0] as { text: string }).text);
    }
    assert.deepEqual(texts, ['one', 'two', 'three'], 'two pages, in order');
    assert.match(fake.requests.at(-1)!.url, /\/input_items\?.*after=/);

    await client.responses.delete(created.id);
    assert.equal(fake.requests.at(-1)!.method, 'DELETE');
    await assert.rejects(client.responses.retrieve(created.id), (err: unknown) => {
      assert.ok(err instanceof OpenAI.NotFoundError);
      assert.match(err.message, /not found/);
      return true;
    });
    const raw = await api(t.baseUrl, 'GET', `/v1/responses/${created.id}`, { key: a.key });
    assert.equal(raw.status, 404);
    assert.deepEqual(raw.body, {
      error: {
        message: `Response with id '${created.id}' not found.`,
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    });
    assert.equal(await logCount(), logs, 'none of them made a log');
  });

  it("passes a stored response's event stream through, event by event", async () => {
    const created = await client.responses.create({ model: 'gpt-4o-mini', input: 'hi', background: true });
    const res = await fetch(`${t.baseUrl}/api/responses/${created.id}?stream=true`, {
      headers: { authorization: `Bearer ${a.key}` },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    const read = await readSse(res);
    assert.equal(read.events[0].event, 'response.created');
    assert.equal(read.events.at(-1)!.event, 'response.completed');
    assert.equal(fake.requests.at(-1)!.headers.accept, 'text/event-stream');
    const replayed = await client.responses.stream({ response_id: created.id }).finalResponse();
    assert.equal(replayed.output_text, HELLO);

    // And a background response can be cancelled; another one cannot (the provider's 400 as it came).
    const cancelled = await client.responses.cancel(created.id);
    assert.equal(cancelled.status, 'cancelled');
    assert.equal(fake.requests.at(-1)!.method, 'POST');
    assert.equal(fake.requests.at(-1)!.path, `/v1/responses/${created.id}/cancel`);
    const plain = await client.responses.create({ model: 'gpt-4o-mini', input: 'hi' });
    await assert.rejects(client.responses.cancel(plain.id), (err: unknown) => err instanceof OpenAI.BadRequestError);
  });

  it('asks the provider a `provider` parameter names, and refuses one it cannot ask', async () => {
    const other = 'sk-other-provider-key-5678';
    const registered = await api(t.baseUrl, 'POST', '/api/provider-keys/', {
      key: a.key,
      body: { provider: 'openai-eu', kind: 'openai', base_url: fake.baseUrl, api_key: other },
    });
    assert.equal(registered.status, 201, registered.text);
    const created = await client.responses.create({ model: 'gpt-4o-mini', input: 'hi' });
    const res = await api(t.baseUrl, 'GET', `/api/responses/${created.id}?provider=openai-eu&include[]=x`, {
      key: a.key,
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.id, created.id);
    const sent = fake.requests.at(-1)!;
    assert.equal(sent.headers.authorization, `Bearer ${other}`);
    assert.equal(sent.url, `/v1/responses/${created.id}?include[]=x`, 'provider stays here');
    // The official client passes the parameter on as it is.
    const retrieved = await client.responses.retrieve(created.id, { provider: 'openai-eu' } as never);
    assert.equal(retrieved.id, created.id);
    assert.equal(fake.requests.at(-1)!.headers.authorization, `Bearer ${other}`);
    assert.equal(fake.requests.at(-1)!.url, `/v1/responses/${created.id}`);

    const unknown = await api(t.baseUrl, 'GET', `/api/responses/${created.id}?provider=nobody`, { key: a.key });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error.code, 'provider_key_missing');
    assert.equal(unknown.body.error.param, 'provider');
    await api(t.baseUrl, 'POST', '/api/provider-keys/', {
      key: a.key,
      body: { provider: 'anthropic', api_key: 'sk-ant-key-1234567890' },
    });
    const anthropic = await api(t.baseUrl, 'DELETE', `/api/responses/${created.id}?provider=anthropic`, {
      key: a.key,
    });
    assert.equal(anthropic.status, 400);
    assert.equal(anthropic.body.error.code, 'provider_not_supported');
    assert.equal(anthropic.body.error.param, 'provider');

    const b = await t.tenant();
    const none = await api(t.baseUrl, 'GET', `/api/responses/${created.id}/input_items`, { key: b.key });
    assert.equal(none.status, 400);
    assert.equal(none.body.error.code, 'provider_key_missing');
    assert.equal(none.body.error.param, null);
    const unauthenticated = await api(t.baseUrl, 'GET', `/api/responses/${created.id}`);
    assert.equal(unauthenticated.status, 401);
  });

  it('answers 502 in the envelope when the provider cannot be reached', async () => {
    fake.behave({ kind: 'drop' }, 1);
    const res = await api(t.baseUrl, 'GET', '/api/responses/resp_x', { key: a.key });
    assert.equal(res.status, 502);
    assert.equal(res.body.error.type, 'upstream_error');
  });
});
