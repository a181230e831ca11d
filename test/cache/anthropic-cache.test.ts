/**
 * The response cache on Anthropic's Messages API (docs/api.md "Response cache"), through the official
 * Anthropic client: a whole message stored once — from a JSON answer or from a stream read to its
 * end — and answered again without the provider, as JSON or as Anthropic's events replayed (text,
 * thinking, tool input, usage) that the client's stream helpers put back together; request_breakdown
 * on a hit; the key (platform parameters and field order left out, the beta header and the chat route
 * kept apart); never an error, a broken stream, or a stream longer than the log keeps.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { cacheWrites, nothingStoredAfter, settledWrites, storedAfter } from '../support/cache-writes.js';
import { type FakeAnthropic, startFakeAnthropic } from '../support/fake-anthropic.js';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';
import { logWhenWritten } from '../support/proxy-app.js';
import { parsedEventsOf } from '../support/sse.js';

const MODEL = 'claude-sonnet-4-20250514';
/**
 * The log keeps this much of an answer (every copy counted): the ordinary answers here fit whole, and a
 * stream with a longer text is not kept whole.
 */
const LOG_MAX_BYTES = 4096;
/** Per million tokens, from the price catalog (Anthropic's public prices for Claude Sonnet 4). */
const SONNET = { input: 3, cacheRead: 0.3, cacheWrite: 3.75, output: 15 };

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are read as the JSON they are
type Json = any;

/** A message as Anthropic sent it, without what the client adds to it (parsed_output). */
const plain = (value: unknown): Json =>
  JSON.parse(JSON.stringify(value, (key, v: unknown) => (key === 'parsed_output' ? undefined : v)));

describe('the response cache on POST /api/anthropic/v1/messages', () => {
  let fake: FakeAnthropic;
  let t: TestApp;
  let a: Tenant;
  let client: Anthropic;
  let n = 0;
  /** The cache status and log of the official client's last answer (its helpers hide the response). */
  let noted: { cache: string | null; logId: string | null } = { cache: null, logId: null };
  /** The anthropic-version the official client sends (a part of the key: sent by hand, it is the same). */
  let version = '';

  /** A question no other test asks, so that each test starts from a miss. */
  const fresh = () => `Question ${++n} at ${Date.now()}`;
  const ask = (content: string, extra: Record<string, unknown> = {}) =>
    ({
      model: MODEL,
      max_tokens: 500,
      messages: [{ role: 'user', content }],
      cache_enabled: true,
      ...extra,
    }) as Anthropic.MessageCreateParamsNonStreaming;
  const post = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    fetch(`${t.baseUrl}/api/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': a.key, 'anthropic-version': version, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  /** The log an answer names (a stream's is written once the stream is over). */
  const logOf = (id: string | null) => logWhenWritten(t, a, id);
  /** Sends `body` (JSON) and waits until its answer is stored. */
  const storeJson = async (body: Anthropic.MessageCreateParamsNonStreaming) => {
    const writes = await cacheWrites(t.baseUrl);
    const message = await client.messages.create(body);
    assert.equal(noted.cache, 'MISS');
    await storedAfter(t.baseUrl, writes);
    return message;
  };

  before(async () => {
    fake = await startFakeAnthropic();
    t = await startApp({
      env: { GATELOG_ANTHROPIC_BASE_URL: fake.baseUrl, GATELOG_LOG_MAX_BYTES: String(LOG_MAX_BYTES) },
    });
    a = await t.tenant();
    const registered = await api(t.baseUrl, 'POST', '/api/provider-keys/', {
      key: a.key,
      body: { provider: 'anthropic', api_key: 'sk-ant-registered-1234' },
    });
    assert.equal(registered.status, 201, registered.text);
    client = new Anthropic({
      apiKey: a.key,
      baseURL: `${t.baseUrl}/api/anthropic`,
      maxRetries: 0,
      fetch: async (url: string | URL | Request, init?: RequestInit) => {
        version = new Headers(init?.headers).get('anthropic-version') ?? '';
        const res = await fetch(url, init);
        noted = { cache: res.headers.get('x-gatelog-cache'), logId: res.headers.get('x-gatelog-log-id') };
        return res;
      },
    });
  });
  beforeEach(() => {
    fake.behave({ kind: 'ok' });
    fake.message();
    noted = { cache: null, logId: null };
  });
  after(async () => {
    await t?.close();
    await fake?.close();
  });

  it('answers the same message again from the cache, without Anthropic, and logs it as a hit at no cost', async () => {
    fake.message({
      usage: { input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 50, cache_creation_input_tokens: 10 },
    });
    const body = ask(fresh());
    const first = await storeJson(body);
    const missLogId = noted.logId;
    const calls = fake.requests.length;
    const second = await client.messages.create(body);
    assert.equal(noted.cache, 'HIT');
    assert.equal(fake.requests.length, calls, 'Anthropic was not called');
    assert.deepEqual(second, first);

    const miss = await logOf(missLogId);
    const hit = await logOf(noted.logId);
    assert.equal(miss.cache_hit, false);
    const cost = (100 * SONNET.input + 50 * SONNET.cacheRead + 10 * SONNET.cacheWrite + 20 * SONNET.output) / 1e6;
    assert.ok(Math.abs(miss.cost - cost) < 1e-12, `the miss is priced: ${miss.cost}`);
    assert.equal(hit.cache_hit, true);
    assert.equal(hit.cost, 0);
    assert.equal(hit.failed, false);
    assert.equal(hit.provider_id, 'anthropic');
    assert.equal(hit.model, MODEL);
    assert.equal(hit.log_type, 'chat');
    // The usage as Anthropic counted it.
    assert.equal(hit.prompt_tokens, 160);
    assert.equal(hit.completion_tokens, 20);
    assert.deepEqual(hit.completion_message, miss.completion_message);
    assert.deepEqual(JSON.parse(hit.output), plain(first));
    const found = await api(t.baseUrl, 'POST', '/api/request-logs/list/', {
      key: a.key,
      body: { filters: { cache_hit: { value: [true] } } },
    });
    assert.ok(found.body.results.some((r: { unique_id: string }) => r.unique_id === hit.unique_id));
  });

  it('replays a stored message as Anthropic’s events: text, thinking and tool input, for the stream helpers', async () => {
    fake.message({
      content: [
        { type: 'thinking', thinking: ['The user wants ', 'the weather.'], signature: 'sig-abc' },
        { type: 'text', text: ['Let me ', 'check.'] },
        { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: ['{"city": ', '"Paris", "days": [1, 2]}'] },
        { type: 'tool_use', id: 'toolu_02', name: 'get_time', input: [] },
      ],
      usage: { input_tokens: 40, output_tokens: 33, cache_read_input_tokens: 8 },
    });
    const body = ask(fresh(), { thinking: { type: 'enabled', budget_tokens: 1024 } });
    const stored = await storeJson(body);
    const calls = fake.requests.length;

    const stream = client.messages.stream(body as Anthropic.MessageStreamParams);
    const texts: string[] = [];
    const thinking: string[] = [];
    stream.on('text', (text) => texts.push(text));
    stream.on('thinking', (piece) => thinking.push(piece));
    const final = await stream.finalMessage();
    assert.equal(noted.cache, 'HIT');
    assert.equal(fake.requests.length, calls, 'Anthropic was not called');
    assert.equal(texts.join(''), 'Let me check.');
    assert.equal(thinking.join(''), 'The user wants the weather.');
    assert.deepEqual(plain(final), plain(stored), 'the stream helper put the stored message back together');
    assert.deepEqual((final.content[2] as Anthropic.ToolUseBlock).input, { city: 'Paris', days: [1, 2] });

    // The events themselves, in Anthropic's order and shapes.
    const res = await post({ ...body, stream: true });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-gatelog-cache'), 'HIT');
    assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    const events = parsedEventsOf(await res.text());
    for (const { event, data } of events) assert.equal(data.type, event, 'each event names its type twice');
    assert.deepEqual(
      events.map((e) => (e.event === 'content_block_delta' ? `${e.data.index}:${e.data.delta.type}` : e.event)),
      [
        'message_start',
        'content_block_start',
        '0:thinking_delta',
        '0:signature_delta',
        'content_block_stop',
        'content_block_start',
        '1:text_delta',
        'content_block_stop',
        'content_block_start',
        '2:input_json_delta',
        'content_block_stop',
        'content_block_start',
        '3:input_json_delta',
        'content_block_stop',
        'message_delta',
        'message_stop',
      ],
    );
    const start = events[0].data.message;
    assert.deepEqual(start.content, []);
    assert.equal(start.stop_reason, null);
    assert.equal(start.usage.input_tokens, 40);
    assert.deepEqual(
      events.filter((e) => e.event === 'content_block_start').map((e) => e.data.content_block),
      [
        { type: 'thinking', thinking: '', signature: '' },
        { type: 'text', text: '' },
        { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: {} },
        { type: 'tool_use', id: 'toolu_02', name: 'get_time', input: {} },
      ],
    );
    const end = events.at(-2)!.data;
    assert.deepEqual(end.delta, { stop_reason: 'tool_use', stop_sequence: null });
    assert.equal(end.usage.output_tokens, 33);
    assert.equal(end.usage.cache_read_input_tokens, 8);

    const log = await logOf(res.headers.get('x-gatelog-log-id'));
    assert.equal(log.cache_hit, true);
    assert.equal(log.stream, true);
    assert.equal(log.cost, 0);
    assert.equal(log.completion_message.content, 'Let me check.');
    assert.equal(log.completion_message.thinking, 'The user wants the weather.');
    assert.deepEqual(
      log.tool_calls.map((c: Json) => c.function),
      [
        { name: 'get_weather', arguments: '{"city":"Paris","days":[1,2]}' },
        { name: 'get_time', arguments: '{}' },
      ],
    );
  });

  it('stores a stream read to its end, and answers it again as JSON and as a stream', async () => {
    fake.message({ content: [{ type: 'text', text: ['Bon', 'jour', ' !'] }] });
    const body = ask(fresh());
    const writes = await cacheWrites(t.baseUrl);
    const streamed = await client.messages.stream(body as Anthropic.MessageStreamParams).finalMessage();
    assert.equal(noted.cache, 'MISS');
    await storedAfter(t.baseUrl, writes);
    const calls = fake.requests.length;

    const json = await client.messages.create(body);
    assert.equal(noted.cache, 'HIT');
    assert.deepEqual(plain(json), plain(streamed), 'the message the stream told, whole');
    const again = await client.messages.stream(body as Anthropic.MessageStreamParams).finalMessage();
    assert.equal(noted.cache, 'HIT');
    assert.deepEqual(plain(again), plain(streamed));
    assert.equal(fake.requests.length, calls);
  });

  it('adds request_breakdown to a hit, cached and at no cost, as JSON and as the event before message_stop', async () => {
    const body = ask(fresh(), { request_breakdown: true });
    await storeJson(body);
    const json = await post(body as unknown as Record<string, unknown>);
    assert.equal(json.headers.get('x-gatelog-cache'), 'HIT');
    const { request_breakdown: rb, ...message } = (await json.json()) as Json;
    assert.equal(rb.cached, true);
    assert.equal(rb.cost, 0);
    assert.equal(rb.stream, false);
    assert.equal(rb.prompt_tokens, 21);
    assert.deepEqual(rb.completion_message, { role: 'assistant', content: 'Hello, world!' });
    assert.equal(message.type, 'message');

    const res = await post({ ...body, stream: true });
    const events = parsedEventsOf(await res.text());
    assert.deepEqual(
      events.slice(-2).map((e) => e.event),
      ['request_breakdown', 'message_stop'],
    );
    const streamed = events.at(-2)!.data.request_breakdown;
    assert.equal(streamed.cached, true);
    assert.equal(streamed.stream, true);
    assert.equal(streamed.cost, 0);
    const final = await client.messages
      .stream({ ...body, stream: true } as Anthropic.MessageStreamParams)
      .finalMessage();
    assert.equal(noted.cache, 'HIT');
    assert.deepEqual(final.content, [{ type: 'text', text: 'Hello, world!' }]);
  });

  it('keys by the request as sent: not its field order nor platform parameters; the beta header and route count', async () => {
    const content = fresh();
    await storeJson(ask(content, { temperature: 0.5, metadata: { run: 1 }, customer_identifier: 'a' }));
    const reordered = {
      customer_identifier: 'b',
      temperature: 0.5,
      messages: [{ content, role: 'user' }],
      metadata: { run: 2 },
      max_tokens: 500,
      cache_enabled: true,
      model: MODEL,
    };
    assert.equal((await post(reordered)).headers.get('x-gatelog-cache'), 'HIT');
    assert.equal((await post({ ...reordered, temperature: 0.6 })).headers.get('x-gatelog-cache'), 'MISS');
    const beta = await post(reordered, { 'anthropic-beta': 'prompt-caching-2024-07-31' });
    assert.equal(beta.headers.get('x-gatelog-cache'), 'MISS', 'a beta can change the answer');
    const older = await post(reordered, { 'anthropic-version': '2023-01-01' });
    assert.equal(older.headers.get('x-gatelog-cache'), 'MISS', 'so can a version');

    // The same JSON sent as a chat completion is another call: its answer is a chat completion.
    const chat = new OpenAI({ apiKey: a.key, baseURL: `${t.baseUrl}/api`, maxRetries: 0 });
    const other = fresh();
    const body = { model: MODEL, max_tokens: 500, messages: [{ role: 'user' as const, content: other }] };
    const writes = await cacheWrites(t.baseUrl);
    const completion = await chat.chat.completions
      .create({ ...body, cache_enabled: true } as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .withResponse();
    assert.equal(completion.response.headers.get('x-gatelog-cache'), 'MISS');
    assert.equal(completion.data.object, 'chat.completion');
    await storedAfter(t.baseUrl, writes);
    // With the version the chat route sends, so that only the route tells them apart.
    const native = await post({ ...body, cache_enabled: true }, { 'anthropic-version': '2023-06-01' });
    assert.equal(native.headers.get('x-gatelog-cache'), 'MISS');
    assert.equal(((await native.json()) as Json).type, 'message');
  });

  it('never stores an error or a stream that broke off', async () => {
    const body = ask(fresh());
    fake.behave({ kind: 'error', status: 529, type: 'overloaded_error', message: 'Overloaded' }, 1);
    let writes = await settledWrites(t.baseUrl);
    await assert.rejects(client.messages.create(body), (err: unknown) => err instanceof Anthropic.APIError);
    await nothingStoredAfter(t.baseUrl, writes);

    for (const behaviour of [
      { kind: 'stream-error', after: 4 },
      { kind: 'stream-cut', after: 6 },
      { kind: 'stream-reset', after: 5 },
    ] as const) {
      fake.behave(behaviour, 1);
      writes = await cacheWrites(t.baseUrl);
      const res = await post({ ...body, stream: true });
      assert.equal(res.headers.get('x-gatelog-cache'), 'MISS', behaviour.kind);
      await res.text();
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.failed, true, behaviour.kind);
      await nothingStoredAfter(t.baseUrl, writes);
    }
    // Then a whole answer is.
    await storeJson(body);
    await client.messages.create(body);
    assert.equal(noted.cache, 'HIT');
  });

  it('does not keep a stream longer than the log keeps, yet keeps the same answer given whole', async () => {
    const long = Array.from({ length: 300 }, (_, i) => `word${i} `.repeat(3));
    assert.ok(long.join('').length > LOG_MAX_BYTES);
    fake.message({ content: [{ type: 'text', text: long }] });
    const body = ask(fresh());
    const writes = await settledWrites(t.baseUrl);
    const streamed = await client.messages.stream(body as Anthropic.MessageStreamParams).finalMessage();
    assert.deepEqual(streamed.content, [{ type: 'text', text: long.join('') }], 'the client got it all');
    await nothingStoredAfter(t.baseUrl, writes);
    await client.messages.create(body);
    assert.equal(noted.cache, 'MISS');

    // A tool's input longer than the log keeps, the same.
    const input = JSON.stringify({ text: 'x'.repeat(LOG_MAX_BYTES) });
    fake.message({ content: [{ type: 'tool_use', id: 'toolu_9', name: 'save', input: [input] }] });
    const tool = ask(fresh());
    const before = await settledWrites(t.baseUrl);
    await client.messages.stream(tool as Anthropic.MessageStreamParams).finalMessage();
    await nothingStoredAfter(t.baseUrl, before);

    // Given whole (JSON), the answer is stored whole, and a stream replays all of it.
    const whole = await client.messages.create(tool);
    assert.equal(noted.cache, 'MISS');
    await storedAfter(t.baseUrl, before);
    const replayed = await client.messages.stream(tool as Anthropic.MessageStreamParams).finalMessage();
    assert.equal(noted.cache, 'HIT');
    assert.deepEqual(plain(replayed), plain(whole));
  });
});
