/**
 * The response cache on the Responses API (docs/api.md "Response cache"), through the official openai
 * client: a completed response stored once — from a JSON answer or from a stream's last event — and
 * answered again without the provider, as JSON or as the provider's events replayed (text, refusal,
 * function calls, sequence numbers) that the client's stream helper puts back together;
 * request_breakdown on a hit; the key; never an error, a broken stream, an incomplete or queued
 * response, nor a call in a conversation.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import OpenAI from 'openai';
import { cacheWrites, nothingStoredAfter, settledWrites, storedAfter } from '../support/cache-writes.js';
import { api } from '../support/harness.js';
import { logNamedBy, logWhenWritten, type ProxyTestApp, startProxyApp } from '../support/proxy-app.js';
import { parsedEventsOf } from '../support/sse.js';

/**
 * The log keeps this much of an answer, every copy counted: the ordinary answers here fit whole, a long
 * text does not (a response's last event is whole all the same).
 */
const LOG_MAX_BYTES = 4096;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are read as the JSON they are
type Json = any;
type Body = OpenAI.Responses.ResponseCreateParamsNonStreaming & Record<string, unknown>;
type StreamBody = Parameters<OpenAI['responses']['stream']>[0];

/** What the provider said of a response, without what the client derives from it (output_text, parsed). */
function core(response: unknown): Json {
  return JSON.parse(
    JSON.stringify(response, (key, value: unknown) =>
      ['output_text', 'output_parsed', 'parsed', 'parsed_arguments'].includes(key) ? undefined : value,
    ),
  );
}

describe('the response cache on POST /api/responses', () => {
  let p: ProxyTestApp;
  let client: OpenAI;
  let n = 0;
  /** The cache status and log of the client's last answer (the stream helper hides the response). */
  let noted: { cache: string | null; logId: string | null } = { cache: null, logId: null };

  /** A question no other test asks, so that each test starts from a miss. */
  const fresh = () => `Question ${++n} at ${Date.now()}`;
  const ask = (input: string, extra: Record<string, unknown> = {}): Body =>
    ({ model: 'gpt-4o-mini', input, cache_enabled: true, ...extra }) as Body;
  const post = (body: Record<string, unknown>) =>
    fetch(`${p.t.baseUrl}/api/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p.a.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const writes = () => cacheWrites(p.t.baseUrl);
  /** Sends `body` (JSON) and waits until its answer is stored. */
  const storeJson = async (body: Body) => {
    const before = await writes();
    const response = await client.responses.create(body);
    assert.equal(noted.cache, 'MISS');
    await storedAfter(p.t.baseUrl, before);
    return response;
  };
  const streamed = (body: Body) => client.responses.stream(body as StreamBody).finalResponse();

  before(async () => {
    p = await startProxyApp({ GATELOG_LOG_MAX_BYTES: String(LOG_MAX_BYTES) });
    client = new OpenAI({
      apiKey: p.a.key,
      baseURL: `${p.t.baseUrl}/api`,
      maxRetries: 0,
      fetch: async (url: string | URL | Request, init?: RequestInit) => {
        const res = await fetch(url, init);
        noted = { cache: res.headers.get('x-gatelog-cache'), logId: res.headers.get('x-gatelog-log-id') };
        return res;
      },
    });
  });
  beforeEach(() => {
    p.fake.behave({ kind: 'ok' });
    p.fake.respond();
    noted = { cache: null, logId: null };
  });
  after(async () => {
    await p?.close();
  });

  it('answers the same response again from the cache, without the provider, and logs it as a hit', async () => {
    p.fake.respond({ usage: { input_tokens: 120, output_tokens: 30, cached_tokens: 100 } });
    const body = ask(fresh(), { instructions: 'Be brief.', temperature: 0.2 });
    const first = await storeJson(body);
    const missLogId = noted.logId;
    const calls = p.fake.responses.length;
    const second = await client.responses.create(body);
    assert.equal(noted.cache, 'HIT');
    assert.equal(p.fake.responses.length, calls, 'the provider was not called');
    assert.deepEqual(second, first);
    assert.equal(second.output_text, 'Hello, world!');

    const miss = await logNamedBy(p, missLogId);
    const hit = await logNamedBy(p, noted.logId);
    assert.equal(miss.cache_hit, false);
    assert.ok(miss.cost > 0);
    assert.equal(hit.cache_hit, true);
    assert.equal(hit.cost, 0);
    assert.equal(hit.log_type, 'response');
    assert.equal(hit.failed, false);
    assert.equal(hit.prompt_tokens, 120);
    assert.equal(hit.completion_tokens, 30);
    assert.deepEqual(hit.prompt_messages, miss.prompt_messages);
    assert.deepEqual(hit.completion_message, { role: 'assistant', content: 'Hello, world!' });
    const found = await api(p.t.baseUrl, 'POST', '/api/request-logs/list/', {
      key: p.a.key,
      body: { filters: { cache_hit: { value: [true] }, log_type: { value: ['response'] } } },
    });
    assert.ok(found.body.results.some((r: { unique_id: string }) => r.unique_id === hit.unique_id));
  });

  it('replays a stored response as the provider’s events, in sequence, for the stream helper', async () => {
    p.fake.respond({
      text: ['Checking', ' both.'],
      functionCalls: [
        { callId: 'call_a', name: 'get_weather', arguments: ['{"city":', '"Paris"}'] },
        { callId: 'call_b', name: 'get_time', arguments: ['{}'] },
      ],
    });
    const body = ask(fresh());
    const stored = await storeJson(body);
    const calls = p.fake.responses.length;

    const stream = client.responses.stream(body as StreamBody);
    let text = '';
    const args: string[] = [];
    stream.on('response.output_text.delta', (event) => (text += event.delta));
    stream.on('response.function_call_arguments.done', (event) => args.push(event.arguments));
    const final = await stream.finalResponse();
    assert.equal(noted.cache, 'HIT');
    assert.equal(p.fake.responses.length, calls, 'the provider was not called');
    assert.equal(text, 'Checking both.');
    assert.deepEqual(args, ['{"city":"Paris"}', '{}']);
    assert.deepEqual(core(final), core(stored), 'the stream helper put the stored response back together');
    assert.equal(final.output_text, 'Checking both.');

    const res = await post({ ...body, stream: true });
    assert.equal(res.headers.get('x-gatelog-cache'), 'HIT');
    assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    const raw = await res.text();
    assert.ok(!raw.includes('[DONE]'), 'a Responses stream has no [DONE]');
    const events = parsedEventsOf(raw);
    assert.deepEqual(
      events.map((e) => e.event),
      [
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta',
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.output_item.added',
        'response.function_call_arguments.delta',
        'response.function_call_arguments.done',
        'response.output_item.done',
        'response.output_item.added',
        'response.function_call_arguments.delta',
        'response.function_call_arguments.done',
        'response.output_item.done',
        'response.completed',
      ],
    );
    events.forEach(({ event, data }, i) => {
      assert.equal(data.type, event);
      assert.equal(data.sequence_number, i, 'sequence numbers from 0, one by one');
    });
    const created = events[0].data.response;
    assert.equal(created.id, stored.id);
    assert.equal(created.status, 'in_progress');
    assert.deepEqual(created.output, []);
    assert.equal(created.usage, null);
    assert.equal(events[2].data.item.status, 'in_progress');
    assert.deepEqual(events[2].data.item.content, []);
    assert.deepEqual(core(events.at(-1)!.data.response), core(stored));

    const log = await logWhenWritten(p.t, p.a, res.headers.get('x-gatelog-log-id'));
    assert.equal(log.cache_hit, true);
    assert.equal(log.stream, true);
    assert.equal(log.cost, 0);
    assert.deepEqual(
      log.tool_calls.map((c: Json) => c.function),
      [
        { name: 'get_weather', arguments: '{"city":"Paris"}' },
        { name: 'get_time', arguments: '{}' },
      ],
    );
  });

  it('replays a refusal', async () => {
    p.fake.respond({ refusal: ['I cannot ', 'help with that.'] });
    const body = ask(fresh());
    const stored = await storeJson(body);
    let refusal = '';
    const stream = client.responses.stream(body as StreamBody);
    stream.on('response.refusal.delta', (event) => (refusal += event.delta));
    const final = await stream.finalResponse();
    assert.equal(noted.cache, 'HIT');
    assert.equal(refusal, 'I cannot help with that.');
    assert.deepEqual(core(final), core(stored));
  });

  it('stores a stream’s last response, longer than the log keeps, and answers it as JSON and as a stream', async () => {
    const long = Array.from({ length: 400 }, (_, i) => `piece${i} `.repeat(2));
    assert.ok(long.join('').length > LOG_MAX_BYTES);
    p.fake.respond({ text: long });
    const body = ask(fresh());
    const before = await writes();
    const live = await streamed(body);
    assert.equal(noted.cache, 'MISS');
    await storedAfter(p.t.baseUrl, before);
    const calls = p.fake.responses.length;

    const json = await client.responses.create(body);
    assert.equal(noted.cache, 'HIT');
    assert.equal(json.output_text, long.join(''), 'the whole text, not the log’s copy');
    assert.deepEqual(core(json), core(live));
    const again = await streamed(body);
    assert.equal(noted.cache, 'HIT');
    assert.deepEqual(core(again), core(live));
    assert.equal(p.fake.responses.length, calls);
  });

  it('adds request_breakdown to a hit, cached and at no cost, as JSON and as the event before the last', async () => {
    const body = ask(fresh(), { request_breakdown: true });
    await storeJson(body);
    const json = await post(body);
    assert.equal(json.headers.get('x-gatelog-cache'), 'HIT');
    const { request_breakdown: rb, ...response } = (await json.json()) as Json;
    assert.equal(rb.cached, true);
    assert.equal(rb.cost, 0);
    assert.equal(rb.stream, false);
    assert.equal(rb.category, 'response');
    assert.equal(rb.prompt_tokens, 19);
    assert.deepEqual(rb.completion_message, { role: 'assistant', content: 'Hello, world!' });
    assert.equal(response.object, 'response');

    const res = await post({ ...body, stream: true });
    const events = parsedEventsOf(await res.text());
    assert.deepEqual(
      events.slice(-2).map((e) => [e.event, e.data.type]),
      [
        ['request_breakdown', 'keepalive'],
        ['response.completed', 'response.completed'],
      ],
    );
    const streamedBreakdown = events.at(-2)!.data.request_breakdown;
    assert.equal(streamedBreakdown.cached, true);
    assert.equal(streamedBreakdown.stream, true);
    const final = await streamed(body);
    assert.equal(noted.cache, 'HIT');
    assert.equal(final.output_text, 'Hello, world!');
  });

  it('keys by the request as sent, not its field order nor its platform parameters', async () => {
    const input = fresh();
    await storeJson(ask(input, { instructions: 'Be brief.', metadata: { run: 1 }, customer_identifier: 'a' }));
    const reordered = {
      customer_identifier: 'b',
      metadata: { run: 2 },
      cache_enabled: true,
      instructions: 'Be brief.',
      input,
      model: 'gpt-4o-mini',
    };
    assert.equal((await post(reordered)).headers.get('x-gatelog-cache'), 'HIT');
    const other = await post({ ...reordered, instructions: 'Be thorough.' });
    assert.equal(other.headers.get('x-gatelog-cache'), 'MISS');
  });

  it('never answers nor stores a call in a conversation: its answer is the conversation’s', async () => {
    const body = ask(fresh(), { conversation: 'conv_1' });
    const before = await settledWrites(p.t.baseUrl);
    const calls = p.fake.responses.length;
    await client.responses.create(body);
    await nothingStoredAfter(p.t.baseUrl, before);
    await client.responses.create(body);
    assert.equal(noted.cache, null, 'not a cached call: no X-Gatelog-Cache');
    await streamed(body);
    assert.equal(noted.cache, null);
    assert.equal(p.fake.responses.length, calls + 3, 'each went to the provider');
    await nothingStoredAfter(p.t.baseUrl, before);
  });

  it('never stores an error, a stream that broke off, an incomplete or a queued response', async () => {
    const body = ask(fresh());
    const before = await settledWrites(p.t.baseUrl);
    p.fake.behave({ kind: 'fail', status: 429, body: { error: { message: 'slow down' } } }, 1);
    await assert.rejects(client.responses.create(body), (err: unknown) => err instanceof OpenAI.APIError);
    for (const behaviour of [
      { kind: 'stream-error', after: 5 },
      { kind: 'stream-failed', after: 7 },
      { kind: 'stream-end', after: 6 },
      { kind: 'stream-reset', after: 4 },
    ] as const) {
      p.fake.behave(behaviour, 1);
      const res = await post({ ...body, stream: true });
      assert.equal(res.headers.get('x-gatelog-cache'), 'MISS', behaviour.kind);
      await res.text();
      const log = await logWhenWritten(p.t, p.a, res.headers.get('x-gatelog-log-id'));
      assert.equal(log.failed, true, behaviour.kind);
    }
    p.fake.respond({ status: 'incomplete', text: ['Cut', ' short'] });
    const incomplete = await client.responses.create(body);
    assert.equal(incomplete.status, 'incomplete');
    await streamed(body);
    p.fake.respond();
    const queued = await client.responses.create({ ...body, background: true } as Body);
    assert.equal(queued.status, 'queued');
    await nothingStoredAfter(p.t.baseUrl, before);
    await client.responses.create({ ...body, background: true } as Body);
    assert.equal(noted.cache, 'MISS');

    // Then a completed response is.
    await storeJson(body);
    await client.responses.create(body);
    assert.equal(noted.cache, 'HIT');
  });
});
