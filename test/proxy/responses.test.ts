import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, before, beforeEach, describe, it } from 'node:test';
import OpenAI from 'openai';
import { LogNotingClient } from '../support/noting-client.js';
import { api, type Tenant, type TestApp } from '../support/harness.js';
import { DEFAULT_RESPONSE_TEXT, DEFAULT_RESPONSE_USAGE } from '../support/fake-responses.js';
import type { FakeUpstream } from '../support/fake-upstream.js';
import { PROVIDER_KEY, type ProxyTestApp, startProxyApp } from '../support/proxy-app.js';
import { stallBoundMs } from '../support/responsive.js';

const HELLO = DEFAULT_RESPONSE_TEXT.join('');
/** Per million tokens, from the price catalog (OpenAI's public prices). */
const PRICES = {
  'gpt-4o-mini': { input: 0.15, cached: 0.075, output: 0.6 },
  'gpt-4o': { input: 2.5, cached: 1.25, output: 10 },
};
const PLATFORM_PARAMS = ['customer_identifier', 'metadata', 'request_breakdown', 'customer_credentials', 'disable_log'];
const BREAKDOWN_FIELDS = [
  'prompt_tokens',
  'completion_tokens',
  'cost',
  'prompt_messages',
  'completion_message',
  'model',
  'cached',
  'timestamp',
  'status_code',
  'stream',
  'latency',
  'scores',
  'category',
  'metadata',
  'routing_time',
  'full_request',
  'sentiment_score',
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const near = (actual: number, expected: number, what: string) =>
  assert.ok(
    Math.abs(actual - expected) <= 1e-9 + Math.abs(expected) * 1e-6,
    `${what}: ${actual}, expected ${expected}`,
  );
const costOf = (model: keyof typeof PRICES, input: number, output: number, cached = 0) =>
  ((input - cached) * PRICES[model].input + cached * PRICES[model].cached + output * PRICES[model].output) / 1e6;

interface SseEvent {
  /** When the event's blank line arrived (performance.now()). */
  at: number;
  /** The event as received, its blank line included. */
  raw: string;
  event: string | null;
  data: string;
}

interface SseRead {
  text: string;
  events: SseEvent[];
  comments: string[];
  /** How the body broke instead of ending, or null. */
  broke: string | null;
}

/** Reads a server-sent event stream as it arrives, until it ends, breaks, or `until` says to stop. */
async function readSse(res: Response, until?: (events: SseEvent[]) => boolean): Promise<SseRead> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const read: SseRead = { text: '', events: [], comments: [], broke: null };
  let pending = '';
  for (;;) {
    let chunk: Awaited<ReturnType<typeof reader.read>>;
    try {
      chunk = await reader.read();
    } catch (err) {
      read.broke = String(err);
      return read;
    }
    if (chunk.done) return read;
    const piece = decoder.decode(chunk.value, { stream: true });
    read.text += piece;
    pending += piece;
    for (let end = pending.indexOf('\n\n'); end >= 0; end = pending.indexOf('\n\n')) {
      const raw = pending.slice(0, end + 2);
      pending = pending.slice(end + 2);
      const lines = raw.trimEnd().split('\n');
      if (lines.every((line) => line.startsWith(':'))) {
        read.comments.push(...lines);
        continue;
      }
      const field = (name: string) => lines.find((line) => line.startsWith(`${name}: `))?.slice(name.length + 2);
      read.events.push({ at: performance.now(), raw, event: field('event') ?? null, data: field('data') ?? '' });
    }
    if (until?.(read.events)) {
      await reader.cancel();
      return read;
    }
  }
}

/**
 * The log an answer names. A stream's log is written when the call ends, which for a client that went
 * away is a moment after the client stopped: wait for it (at most 3 s) rather than for one flush.
 */
async function logWhenWritten(t: TestApp, a: Tenant, id: string | null) {
  assert.ok(id, 'the answer names its log');
  for (let waited = 0; ; waited += 50) {
    await t.flush();
    const res = await api(t.baseUrl, 'GET', `/api/request-logs/${id}/`, { key: a.key });
    if (res.status === 200) return res.body;
    assert.ok(res.status === 404 && waited < 3000, `log ${id}: ${res.status} ${res.text}`);
    await sleep(50);
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- events are read as the JSON they are
const parse = (event: { data: string }): any => JSON.parse(event.data);
const isDelta = (event: SseEvent) => event.event === 'response.output_text.delta';

describe('POST /api/responses', () => {
  let p: ProxyTestApp;
  let fake: FakeUpstream;
  let t: TestApp;
  let a: Tenant;
  let client: OpenAI;
  /** The official client again, noting the log each answer names (the stream helpers hide the response). */
  let noting: LogNotingClient;

  const post = (body: Record<string, unknown>, signal?: AbortSignal) =>
    fetch(`${t.baseUrl}/api/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal,
    });
  const logOf = (id: string | null) => logWhenWritten(t, a, id);
  const last = () => fake.responses.at(-1)!;
  const sentJson = () => last().request.json as Record<string, unknown>;
  /** The upstream's events as it wrote them. */
  const upstreamEvents = () => last().sent.map((e) => `event: ${e.event}\ndata: ${e.data}\n\n`);

  before(async () => {
    p = await startProxyApp({ GATELOG_UPSTREAM_TIMEOUT_MS: '5000' });
    ({ fake, t, a, client } = p);
    noting = new LogNotingClient(t.baseUrl, a.key);
  });
  beforeEach(() => {
    fake.behave({ kind: 'ok' });
    fake.respond();
    noting.logId = null;
  });
  after(() => p.close());

  describe('not streaming', () => {
    it('passes the JSON through unchanged, sends no platform parameter upstream, and logs the call', async () => {
      const res = await client.responses
        .create({
          model: 'gpt-4o-mini',
          instructions: 'You are terse.',
          input: 'Say hello.',
          temperature: 0.3,
          max_output_tokens: 50,
          metadata: { feature: 'greeting' },
          customer_identifier: 'cust-1',
        } as OpenAI.Responses.ResponseCreateParamsNonStreaming)
        .withResponse();
      assert.equal(res.response.status, 200);
      assert.equal(res.data.output_text, HELLO);
      const { output_text: _, ...answer } = res.data;
      assert.deepEqual(answer, JSON.parse(last().sent[0].data), 'the answer is what the upstream sent');
      assert.equal(res.response.headers.get('x-request-id'), `req_${fake.requests.length}`);
      const sent = last().request;
      assert.equal(sent.path, '/v1/responses');
      assert.equal(sent.headers.authorization, `Bearer ${PROVIDER_KEY}`);
      assert.deepEqual(sent.json, {
        model: 'gpt-4o-mini',
        instructions: 'You are terse.',
        input: 'Say hello.',
        temperature: 0.3,
        max_output_tokens: 50,
      });

      const log = await logOf(res.response.headers.get('x-gatelog-log-id'));
      assert.equal(log.log_type, 'response');
      assert.equal(log.log_method, 'inference');
      assert.equal(log.model, 'gpt-4o-mini');
      assert.equal(log.provider_id, 'openai');
      assert.equal(log.status_code, 200);
      assert.equal(log.failed, false);
      assert.equal(log.stream, false);
      assert.equal(log.time_to_first_token, null, 'no first token without a stream');
      assert.deepEqual(log.prompt_messages, [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Say hello.' },
      ]);
      assert.deepEqual(log.completion_message, { role: 'assistant', content: HELLO });
      assert.equal(log.tool_calls, null);
      assert.equal(log.temperature, 0.3);
      assert.equal(log.max_tokens, 50);
      assert.equal(log.customer_identifier, 'cust-1');
      assert.equal(log.metadata.feature, 'greeting');
      assert.notEqual(log.metadata.usage_source, 'estimated');
      assert.equal(log.prompt_tokens, DEFAULT_RESPONSE_USAGE.input_tokens);
      assert.equal(log.completion_tokens, DEFAULT_RESPONSE_USAGE.output_tokens);
      near(log.cost, costOf('gpt-4o-mini', 19, 4), 'cost');
      assert.deepEqual(JSON.parse(log.output), answer, 'the output is the whole response');
    });

    it('is copied into a dataset with its prompt and its output text', async () => {
      const res = await post({ model: 'gpt-4o-mini', instructions: 'Be brief.', input: 'Say hello.' });
      const logId = res.headers.get('x-gatelog-log-id');
      await logOf(logId);
      const dataset = await api(t.baseUrl, 'POST', '/api/datasets/', { key: a.key, body: { name: 'responses' } });
      assert.equal(dataset.status, 201, dataset.text);
      const path = `/api/datasets/${dataset.body.id}/logs/`;
      const added = await api(t.baseUrl, 'POST', path, { key: a.key, body: { log_ids: [logId] } });
      assert.equal(added.status, 201, added.text);
      const list = await api(t.baseUrl, 'GET', `${path}list/`, { key: a.key });
      assert.equal(list.body.results.length, 1);
      assert.equal(list.body.results[0].log_type, 'response');
      assert.equal(list.body.results[0].prompt, 'Say hello.');
      assert.equal(list.body.results[0].completion, HELLO);
    });

    it('adds request_breakdown (stream false), the rest of the answer unchanged', async () => {
      const res = await post({
        model: 'gpt-4o-mini',
        input: 'Say hello.',
        request_breakdown: true,
        metadata: { k: 'v' },
        customer_identifier: 'cust-2',
      });
      assert.equal(res.status, 200);
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the answer is read as the JSON it is
      const body: any = await res.json();
      const { request_breakdown: rb, ...rest } = body;
      assert.deepEqual(rest, JSON.parse(last().sent[0].data));
      for (const field of BREAKDOWN_FIELDS) assert.ok(field in rb, `request_breakdown.${field}`);
      assert.equal(rb.stream, false);
      assert.equal(rb.category, 'response');
      assert.equal(rb.cached, false);
      assert.equal(rb.model, 'gpt-4o-mini');
      assert.equal(rb.prompt_tokens, 19);
      assert.equal(rb.completion_tokens, 4);
      assert.equal(rb.status_code, 200);
      assert.deepEqual(rb.metadata, { k: 'v' });
      assert.deepEqual(rb.prompt_messages, [{ role: 'user', content: 'Say hello.' }]);
      assert.deepEqual(rb.completion_message, { role: 'assistant', content: HELLO });
      near(rb.cost, costOf('gpt-4o-mini', 19, 4), 'cost');
      assert.deepEqual(rb.full_request, { model: 'gpt-4o-mini', input: 'Say hello.' });
      assert.deepEqual(rb.full_request, sentJson(), 'the request as sent upstream');
    });

    it('reads input items as chat messages, function calls as tool calls, and prices cached input', async () => {
      const usage = { input_tokens: 2000, output_tokens: 300, cached_tokens: 1200, reasoning_tokens: 100 };
      fake.respond({
        usage,
        model: 'gpt-4o-2024-08-06',
        functionCalls: [{ callId: 'call_w', name: 'get_weather', arguments: ['{"city":', '"Paris"}'] }],
      });
      const tools = [
        {
          type: 'function',
          name: 'get_weather',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
          strict: false,
        },
      ];
      const input = [
        { role: 'developer', content: 'Use tools.' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris?' }] },
        { type: 'function_call', call_id: 'call_0', name: 'get_time', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_0', output: '12:00' },
        { type: 'reasoning', id: 'rs_1', summary: [] },
      ];
      const res = await post({ model: 'gpt-4o', input, tools, tool_choice: 'auto' });
      assert.equal(res.status, 200, await res.clone().text());
      assert.deepEqual(sentJson(), { model: 'gpt-4o', input, tools, tool_choice: 'auto' });
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.deepEqual(log.prompt_messages, [
        { role: 'developer', content: 'Use tools.' },
        { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'get_time', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'call_0', content: '12:00' },
        { type: 'reasoning', id: 'rs_1', summary: [] },
      ]);
      const call = { id: 'call_w', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };
      assert.deepEqual(log.completion_message, { role: 'assistant', content: null, tool_calls: [call] });
      assert.deepEqual(log.tool_calls, [call]);
      assert.deepEqual(log.tools, tools);
      assert.equal(log.tool_choice, 'auto');
      assert.equal(log.model, 'gpt-4o-2024-08-06', 'the model that answered');
      assert.equal(log.prompt_tokens, 2000);
      assert.equal(log.completion_tokens, 300);
      near(log.cost, costOf('gpt-4o', 2000, 300, 1200), 'cached input at its own price');
      const kept = JSON.parse(log.output).usage;
      assert.equal(kept.input_tokens_details.cached_tokens, 1200);
      assert.equal(kept.output_tokens_details.reasoning_tokens, 100);
    });

    it('uses the caller’s own provider key, never stored', async () => {
      const customerKey = 'sk-customer-key-SECRETSECRET';
      const res = await post({
        model: 'gpt-4o',
        input: 'hi',
        store: false,
        user: 'end-user-7',
        customer_credentials: { openai: { api_key: customerKey } },
        disable_log: false,
      });
      assert.equal(res.status, 200);
      assert.equal(await res.text(), last().sent[0].data, 'the upstream bytes, unchanged');
      assert.deepEqual(sentJson(), { model: 'gpt-4o', input: 'hi', store: false, user: 'end-user-7' });
      for (const param of PLATFORM_PARAMS) assert.ok(!(param in sentJson()), `${param} stays here`);
      assert.equal(last().request.headers.authorization, `Bearer ${customerKey}`);
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.used_custom_credential, true);
      assert.ok(!JSON.stringify(log).includes('SECRETSECRET'), 'the key is never stored');
    });

    it('passes an upstream error through with its status and body, and logs it failed', async () => {
      const error = {
        error: { message: 'Rate limit reached for gpt-4o', type: 'requests', param: null, code: 'rate_limit_exceeded' },
      };
      fake.behave({ kind: 'fail', status: 429, body: error }, 1);
      const res = await post({ model: 'gpt-4o', input: 'hi' });
      assert.equal(res.status, 429);
      assert.deepEqual(await res.json(), error);
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.log_type, 'response');
      assert.equal(log.status_code, 429);
      assert.equal(log.failed, true);
      assert.equal(log.error_message, 'Rate limit reached for gpt-4o');
      assert.equal(log.cost, 0);
    });

    it('keeps only metrics with disable_log', async () => {
      const res = await post({ model: 'gpt-4o-mini', input: 'secret words', disable_log: true });
      assert.equal(res.status, 200);
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.input, null);
      assert.equal(log.output, null);
      assert.equal(log.prompt_messages, null);
      assert.equal(log.completion_message, null);
      assert.equal(log.prompt_tokens, 19);
    });

    it('logs a background response as the call answered it: queued, nothing counted yet', async () => {
      const res = await client.responses
        .create({ model: 'gpt-4o-mini', input: 'Say hello.', background: true })
        .withResponse();
      assert.equal(res.data.status, 'queued');
      const log = await logOf(res.response.headers.get('x-gatelog-log-id'));
      assert.equal(log.status_code, 200);
      assert.equal(log.prompt_tokens, 0);
      assert.equal(log.completion_tokens, 0);
      assert.equal(log.cost, 0);
      assert.equal(log.metadata.usage_source, undefined, 'no estimate of what is still to come');
      assert.equal(JSON.parse(log.output).status, 'queued');
      assert.deepEqual(log.completion_message, { role: 'assistant', content: null });
    });

    it('answers /v1/responses the same', async () => {
      const v1 = new OpenAI({ apiKey: a.key, baseURL: `${t.baseUrl}/v1`, maxRetries: 0 });
      const res = await v1.responses.create({ model: 'gpt-4o-mini', input: 'hi' });
      assert.equal(res.output_text, HELLO);
      assert.equal(last().request.path, '/v1/responses');
    });
  });

  describe('streaming', () => {
    it('writes each event as it arrives, byte for byte, without [DONE], and logs the stream', async () => {
      // The pause between events is long enough to tell one event from the next on a busy machine.
      fake.respond({ eventDelayMs: 100, firstEventDelayMs: 200 });
      const res = await post({ model: 'gpt-4o-mini', input: 'Say hello.', stream: true });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
      assert.equal(res.headers.get('cache-control'), 'no-cache');
      assert.equal(res.headers.get('content-length'), null);
      assert.equal(res.headers.get('x-request-id'), `req_${fake.requests.length}`);
      const read = await readSse(res);
      assert.equal(read.broke, null);
      assert.equal(read.text, upstreamEvents().join(''), 'every event, as the upstream wrote it');
      assert.ok(!read.text.includes('[DONE]'));
      assert.equal(read.events[0].event, 'response.created');
      assert.equal(read.events.at(-1)!.event, 'response.completed');
      // Each event reached the client before the upstream sent the next one: nothing was held back.
      const sent = last().sent;
      read.events.forEach((event, i) => {
        const next = sent[i + 1];
        if (next === undefined) return;
        const late = event.at - sent[i].at;
        assert.ok(event.at < next.at, `event ${i} arrived ${late.toFixed(0)} ms after it was sent`);
      });

      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.log_type, 'response');
      assert.equal(log.stream, true);
      assert.equal(log.status_code, 200);
      assert.equal(log.failed, false);
      assert.equal(log.prompt_tokens, 19, 'from response.completed');
      assert.equal(log.completion_tokens, 4);
      near(log.cost, costOf('gpt-4o-mini', 19, 4), 'cost');
      assert.deepEqual(log.completion_message, { role: 'assistant', content: HELLO });
      assert.deepEqual(JSON.parse(log.output), parse(read.events.at(-1)!).response, "the last event's response");
      // From dispatch to the first text delta: after the 200 ms pause and the events before it.
      const firstDelta = read.events.findIndex(isDelta);
      assert.ok(log.time_to_first_token >= 0.2 + (firstDelta - 1) * 0.1 - 0.02, `ttft ${log.time_to_first_token}`);
      assert.ok(log.time_to_first_token < log.latency, `ttft ${log.time_to_first_token}, latency ${log.latency}`);
      const rate = log.completion_tokens / (log.latency - log.time_to_first_token);
      assert.ok(Math.abs(log.tokens_per_second - rate) <= rate * 0.05, `${log.tokens_per_second} vs ${rate}`);
    });

    it('is read by the official client: the events, and the stream helper’s final response', async () => {
      const events = await client.responses.create({ model: 'gpt-4o-mini', input: 'hi', stream: true });
      const types: string[] = [];
      let text = '';
      for await (const event of events) {
        types.push(event.type);
        if (event.type === 'response.output_text.delta') text += event.delta;
      }
      assert.equal(text, HELLO);
      assert.deepEqual(
        types,
        last().sent.map((e) => e.event),
      );

      const stream = noting.client.responses.stream({ model: 'gpt-4o-mini', input: 'hi' });
      const final = await stream.finalResponse();
      assert.equal(final.output_text, HELLO);
      assert.equal(final.usage?.input_tokens, 19);
      const log = await logOf(noting.logId);
      assert.equal(log.stream, true);
      assert.equal(log.completion_message.content, HELLO);
    });

    it('sends one request_breakdown event just before the last one, which the stream helpers pass over', async () => {
      const res = await post({ model: 'gpt-4o-mini', input: 'Say hello.', stream: true, request_breakdown: true });
      const read = await readSse(res);
      const upstream = upstreamEvents();
      assert.equal(read.events.length, upstream.length + 1);
      assert.deepEqual(
        read.events.map((e) => e.raw),
        [...upstream.slice(0, -1), read.events.at(-2)!.raw, upstream.at(-1)],
        "the upstream's events unchanged, the breakdown before the last",
      );
      const breakdown = read.events.at(-2)!;
      assert.equal(breakdown.event, 'request_breakdown');
      const data = parse(breakdown);
      assert.deepEqual(Object.keys(data).sort(), ['request_breakdown', 'type']);
      assert.equal(data.type, 'keepalive');
      const rb = data.request_breakdown;
      for (const field of BREAKDOWN_FIELDS) assert.ok(field in rb, `request_breakdown.${field}`);
      assert.equal(rb.stream, true);
      assert.equal(rb.category, 'response');
      assert.equal(rb.model, 'gpt-4o-mini');
      assert.equal(rb.prompt_tokens, 19);
      assert.equal(rb.completion_tokens, 4);
      assert.deepEqual(rb.completion_message, { role: 'assistant', content: HELLO });
      near(rb.cost, costOf('gpt-4o-mini', 19, 4), 'cost');
      assert.deepEqual(rb.full_request, sentJson(), 'the request as sent upstream');
      for (const param of PLATFORM_PARAMS) assert.ok(!(param in sentJson()), `${param} stays here`);

      // The official stream helper builds the same response, the breakdown notwithstanding.
      const final = await client.responses
        .stream({ model: 'gpt-4o-mini', input: 'hi', request_breakdown: true } as Parameters<
          OpenAI['responses']['stream']
        >[0])
        .finalResponse();
      assert.equal(final.output_text, HELLO);
      assert.equal(final.status, 'completed');
    });

    it('logs streamed function calls as tool calls, and an incomplete response as a success', async () => {
      fake.respond({
        functionCalls: [
          { callId: 'call_a', name: 'get_weather', arguments: ['{"ci', 'ty":"Pa', 'ris"}'] },
          { callId: 'call_b', name: 'get_time', arguments: ['{"tz":', '"Europe/Paris"}'] },
        ],
      });
      const final = await noting.client.responses
        .stream({ model: 'gpt-4o', input: 'Weather and time in Paris?' })
        .finalResponse();
      const expected = [
        { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{"tz":"Europe/Paris"}' } },
      ];
      assert.equal(final.output.length, 2);
      const log = await logOf(noting.logId);
      assert.deepEqual(log.tool_calls, expected);
      assert.deepEqual(log.completion_message, { role: 'assistant', content: null, tool_calls: expected });
      assert.ok(log.time_to_first_token !== null, 'the first argument delta is the first output');

      fake.respond({ status: 'incomplete', text: ['Cut', ' at the limit'] });
      const res = await post({ model: 'gpt-4o-mini', input: 'long story', stream: true, max_output_tokens: 16 });
      const read = await readSse(res);
      assert.equal(read.events.at(-1)!.event, 'response.incomplete');
      const incomplete = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(incomplete.status_code, 200);
      assert.equal(incomplete.failed, false);
      assert.equal(incomplete.completion_message.content, 'Cut at the limit');
      assert.equal(incomplete.max_tokens, 16);
      assert.equal(JSON.parse(incomplete.output).status, 'incomplete');
    });

    it('aborts the upstream at once when the client goes away, and logs a 499 with the partial answer', async () => {
      fake.respond({ text: Array.from({ length: 30 }, (_, i) => `w${i} `), eventDelayMs: 60 });
      const controller = new AbortController();
      const res = await post({ model: 'gpt-4o-mini', input: 'hi', stream: true }, controller.signal);
      const read = await readSse(res, (events) => events.filter(isDelta).length >= 2);
      const received = read.events.filter(isDelta).map((e) => parse(e).delta as string);
      controller.abort();
      const goneAt = performance.now();
      const exchange = last();
      for (let i = 0; i < 1000 && exchange.closedEarlyAt === null; i++) await sleep(10);
      assert.ok(exchange.closedEarlyAt !== null, 'the upstream request was aborted');
      assert.ok(
        // At once: well before the fake's answer would have ended (a busy machine stretches the bound).
        exchange.closedEarlyAt - goneAt < stallBoundMs(100),
        `aborted ${(exchange.closedEarlyAt - goneAt).toFixed(0)} ms later`,
      );
      assert.equal(exchange.endedAt, null);

      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.status_code, 499);
      assert.equal(log.failed, true);
      assert.equal(log.error_message, 'client disconnected');
      const partial: string = log.completion_message.content;
      assert.ok(partial.startsWith(received.join('')), `the log holds what was sent: ${partial}`);
      assert.ok(partial.length < 30 * 4, 'and not the whole answer');
      assert.equal(JSON.parse(log.output).status, 'in_progress', 'the response as it stood');
      assert.ok(log.prompt_tokens > 0 && log.completion_tokens > 0, 'tokens estimated');
      assert.equal(log.metadata.usage_source, 'estimated');
      assert.equal(log.cost, 0, 'a failed call costs nothing');
    });

    it('passes a non-2xx upstream answer through as JSON, never as a stream', async () => {
      const error = { error: { message: 'Invalid model', type: 'invalid_request_error', param: 'model', code: null } };
      fake.behave({ kind: 'fail', status: 400, body: error, headers: { 'x-request-id': 'req_refused' } }, 1);
      const res = await post({ model: 'gpt-4o-mini', input: 'hi', stream: true });
      assert.equal(res.status, 400);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(res.headers.get('x-request-id'), 'req_refused');
      assert.deepEqual(await res.json(), error);
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.status_code, 400);
      assert.equal(log.stream, true);
      assert.equal(log.failed, true);
    });

    for (const kind of ['stream-reset', 'stream-malformed'] as const) {
      it(`ends with a stream_interrupted error event when the upstream ${kind === 'stream-reset' ? 'resets' : 'sends a malformed event'}`, async () => {
        // Six events: created, in_progress, the item and its part, "Hello" and ", ".
        fake.behave({ kind, after: 6 }, 1);
        fake.respond({ eventDelayMs: 20 });
        const res = await post({ model: 'gpt-4o-mini', input: 'hi', stream: true });
        assert.equal(res.status, 200);
        const read = await readSse(res);
        assert.equal(read.broke, null, 'the stream ends cleanly after its error event');
        assert.deepEqual(
          read.events.slice(0, -1).map((e) => e.raw),
          upstreamEvents().slice(0, 6),
          'what came before the fault, then the error',
        );
        const end = read.events.at(-1)!;
        assert.equal(end.event, 'error');
        const error = parse(end);
        assert.equal(error.type, 'error');
        assert.equal(error.code, 'stream_interrupted');
        assert.equal(typeof error.message, 'string');
        assert.deepEqual(error.error, { message: error.message, type: 'upstream_error', code: 'stream_interrupted' });

        const log = await logOf(res.headers.get('x-gatelog-log-id'));
        assert.equal(log.status_code, 502);
        assert.equal(log.failed, true);
        assert.equal(log.completion_message.content, 'Hello, ');

        // The official client reports it as an error.
        fake.behave({ kind, after: 6 }, 1);
        await assert.rejects(
          client.responses.stream({ model: 'gpt-4o-mini', input: 'hi' }).finalResponse(),
          (err: unknown) => err instanceof OpenAI.APIError && /stream|provider/i.test(err.message),
        );
      });
    }

    it('passes in-band error and response.failed events through, and fails the log', async () => {
      fake.behave({ kind: 'stream-error', after: 6, message: 'The server had an error processing your request.' }, 1);
      const res = await post({ model: 'gpt-4o-mini', input: 'hi', stream: true });
      const read = await readSse(res);
      assert.equal(read.text, upstreamEvents().join(''), 'the error event as the upstream sent it, and nothing after');
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.failed, true);
      assert.equal(log.status_code, 502);
      assert.equal(log.error_message, 'The server had an error processing your request.');
      assert.equal(log.completion_message.content, 'Hello, ');

      fake.behave({ kind: 'stream-failed', after: 7, message: 'The model failed.' }, 1);
      const failedRes = await post({ model: 'gpt-4o-mini', input: 'hi', stream: true, request_breakdown: true });
      const failedRead = await readSse(failedRes);
      assert.equal(failedRead.text, upstreamEvents().join(''), 'no request_breakdown for a failed response');
      assert.equal(failedRead.events.at(-1)!.event, 'response.failed');
      const failed = await logOf(failedRes.headers.get('x-gatelog-log-id'));
      assert.equal(failed.status_code, 502);
      assert.equal(failed.failed, true);
      assert.equal(failed.error_message, 'The model failed.');
      assert.equal(JSON.parse(failed.output).status, 'failed');
    });

    it('fails the log of a stream that ends before its last event', async () => {
      fake.behave({ kind: 'stream-end', after: 6 }, 1);
      const res = await post({ model: 'gpt-4o-mini', input: 'hi', stream: true });
      const read = await readSse(res);
      assert.equal(read.text, upstreamEvents().join(''));
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.status_code, 502);
      assert.equal(log.error_message, 'The provider ended its stream before its last event.');
      assert.equal(log.completion_message.content, 'Hello, ');
    });
  });

  describe('validation', () => {
    it('refuses each invalid request with a 400 naming the field, sends nothing upstream, and logs it', async () => {
      const user = { role: 'user', content: 'hi' };
      const cases: [unknown, string | null][] = [
        [{ input: 'hi' }, 'model'],
        [{ model: '', input: 'hi' }, 'model'],
        [{ model: 42, input: 'hi' }, 'model'],
        [{ model: 'gpt-4o', input: 42 }, 'input'],
        [{ model: 'gpt-4o', input: { role: 'user', content: 'hi' } }, 'input'],
        [{ model: 'gpt-4o', input: [user, 'hi'] }, 'input.1'],
        [{ model: 'gpt-4o', input: [user, null] }, 'input.1'],
        [{ model: 'gpt-4o', input: [{ role: 'robot', content: 'x' }] }, 'input.0.role'],
        [{ model: 'gpt-4o', input: [{ type: 'message', content: 'x' }] }, 'input.0.role'],
        [{ model: 'gpt-4o', input: [{ role: 'user' }] }, 'input.0.content'],
        [{ model: 'gpt-4o', input: [{ type: 7 }] }, 'input.0.type'],
        [{ model: 'gpt-4o', input: 'hi', instructions: ['be brief'] }, 'instructions'],
        [{ model: 'gpt-4o', input: 'hi', stream: 'true' }, 'stream'],
        [{ model: 'gpt-4o', input: 'hi', tools: { type: 'function' } }, 'tools'],
        [{ model: 'gpt-4o', input: 'hi', metadata: 'x' }, 'metadata'],
        [{ model: 'gpt-4o', input: 'hi', customer_identifier: 7 }, 'customer_identifier'],
        [['not', 'an', 'object'], null],
      ];
      const forwarded = fake.requests.length;
      for (const [body, param] of cases) {
        const where = JSON.stringify(body);
        const res = await api(t.baseUrl, 'POST', '/api/responses', { key: a.key, body });
        assert.equal(res.status, 400, where);
        assert.equal(res.body.error.type, 'invalid_request_error', where);
        assert.equal(res.body.error.param, param, where);
        const log = await logOf(res.headers.get('x-gatelog-log-id'));
        assert.equal(log.log_type, 'response', where);
        assert.equal(log.status_code, 400, where);
        assert.equal(log.failed, true, where);
      }
      assert.equal(fake.requests.length, forwarded, 'nothing went upstream');
    });

    it('refuses a model an Anthropic provider serves, and a body that is not JSON', async () => {
      const claude = await api(t.baseUrl, 'POST', '/api/responses', {
        key: a.key,
        body: { model: 'claude-sonnet-4-5', input: 'hi' },
      });
      assert.equal(claude.status, 400);
      assert.equal(claude.body.error.code, 'provider_not_supported');
      assert.equal(claude.body.error.param, 'model');
      const broken = await api(t.baseUrl, 'POST', '/api/responses', { key: a.key, body: '{"model": "gpt-4o",' });
      assert.equal(broken.status, 400);
      const log = await logOf(broken.headers.get('x-gatelog-log-id'));
      assert.equal(log.log_type, 'response');
      assert.equal(log.failed, true);
    });
  });
});

describe('POST /api/responses: idle timeout and the log cap', () => {
  let p: ProxyTestApp;
  let fake: FakeUpstream;
  let t: TestApp;
  let a: Tenant;
  const IDLE_MS = 600;
  const LOG_MAX_BYTES = 4096;

  const post = (body: Record<string, unknown>) =>
    fetch(`${t.baseUrl}/api/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const logOf = (id: string | null) => logWhenWritten(t, a, id);

  before(async () => {
    p = await startProxyApp({
      GATELOG_STREAM_IDLE_TIMEOUT_MS: String(IDLE_MS),
      GATELOG_STREAM_KEEPALIVE_MS: '100',
      GATELOG_LOG_MAX_BYTES: String(LOG_MAX_BYTES),
    });
    ({ fake, t, a } = p);
  });
  beforeEach(() => {
    fake.behave({ kind: 'ok' });
    fake.respond();
  });
  after(() => p.close());

  it('writes keepalive comments while the upstream is quiet, and ends a silent stream with stream_timeout', async () => {
    fake.behave({ kind: 'stream-silent', after: 6 }, 1);
    const res = await post({ model: 'gpt-4o-mini', input: 'hi', stream: true });
    const read = await readSse(res);
    assert.ok(read.comments.includes(': keepalive'), read.text.slice(-300));
    const end = read.events.at(-1)!;
    assert.equal(end.event, 'error');
    assert.equal(parse(end).code, 'stream_timeout');
    const silentFor = end.at - fake.responses.at(-1)!.sent.at(-1)!.at;
    assert.ok(silentFor >= IDLE_MS, `the error came ${silentFor.toFixed(0)} ms after the last event was sent`);
    const log = await logOf(res.headers.get('x-gatelog-log-id'));
    assert.equal(log.status_code, 504);
    assert.equal(log.failed, true);
    assert.equal(log.completion_message.content, 'Hello, ');
    assert.equal(read.broke, null, 'the stream ends cleanly after its error event');
  });

  it("caps the log's copy of a long answer, never the client's stream", async () => {
    const pieces = Array.from({ length: 40 }, (_, i) => `${String(i).padStart(4, '0')}${'y'.repeat(996)}`);
    fake.respond({ text: pieces });
    const res = await post({ model: 'gpt-4o-mini', input: 'hi', stream: true });
    const read = await readSse(res);
    const text = read.events
      .filter(isDelta)
      .map((e) => parse(e).delta)
      .join('');
    assert.equal(text, pieces.join(''), 'the client got all 40,000 characters');
    assert.equal(parse(read.events.at(-1)!).response.output[0].content[0].text, pieces.join(''));
    const log = await logOf(res.headers.get('x-gatelog-log-id'));
    assert.equal(log.status_code, 200);
    assert.equal(log.completion_tokens, DEFAULT_RESPONSE_USAGE.output_tokens);
    for (const text of [log.output, JSON.stringify(log.completion_message)]) {
      assert.ok(!text.includes(pieces.join('')), 'the whole answer is not stored');
      assert.ok(Buffer.byteLength(text) <= 3 * LOG_MAX_BYTES, `stored ${text.length} characters`);
      assert.match(text, /more characters not logged/);
    }
  });
});

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
