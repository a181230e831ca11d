/**
 * POST /api/chat/completions, the cases the official client meets and the ways a stream ends: n > 1
 * (plain and streamed, with parallel tool calls per choice), request_breakdown through the client,
 * exactly one log however a stream ends (and what that log says), and the memory an unread stream costs.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import { after, before, beforeEach, describe, it } from 'node:test';
import OpenAI from 'openai';
import { LogNotingClient } from '../support/noting-client.js';
import { api, type Tenant, type TestApp } from '../support/harness.js';
import { DEFAULT_CHAT_CONTENT, type FakeUpstream } from '../support/fake-upstream.js';
import { logWhenWritten, type ProxyTestApp, startProxyApp } from '../support/proxy-app.js';

const HELLO = DEFAULT_CHAT_CONTENT.join('');
const MESSAGES = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Name two fruits.' },
] as const;
/** gpt-4o-mini per million tokens, from the price catalog (OpenAI's public prices). */
const PRICE = { input: 0.15, output: 0.6 };
/** Short, so that the silent upstream's case ends soon; long enough that a busy machine is not silent. */
const IDLE_MS = 1500;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const near = (actual: number, expected: number, what: string) =>
  assert.ok(
    Math.abs(actual - expected) <= 1e-9 + Math.abs(expected) * 1e-6,
    `${what}: ${actual}, expected ${expected}`,
  );

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- logs and events are read as the JSON they are
type Loose = any;

interface ToolCall {
  id: string;
  type: string;
  function: { name: string; arguments: string };
}
/** A tool call without what a client or the log may add beside it. */
const shape = (calls: ToolCall[] | undefined) =>
  (calls ?? []).map(({ id, type, function: { name, arguments: args } }) => ({
    id,
    type,
    function: { name, arguments: args },
  }));

/** The server-sent events of a body read to its end: each `data:` payload, and how the body ended. */
async function readEvents(res: Response): Promise<{ data: string[]; text: string; broke: boolean }> {
  let text = '';
  let broke = false;
  try {
    text = await res.text();
  } catch {
    broke = true;
  }
  const data = text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => line.slice(6));
  return { data, text, broke };
}

/** The heap and Buffers the process holds once garbage is collected (the app runs in this process). */
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** A sample of gatelog's /metrics, or null when it is not there. */
function sample(text: string, name: string): number | null {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line === undefined ? null : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('POST /api/chat/completions: n, request_breakdown and the official client', () => {
  let p: ProxyTestApp;
  let fake: FakeUpstream;
  let t: TestApp;
  let a: Tenant;
  let client: OpenAI;
  /** The official client again, noting the log each answer names (the stream helpers hide the response). */
  let noting: LogNotingClient;

  const logOf = (id: string | null) => logWhenWritten(t, a, id);
  const lastSent = () => fake.chats.at(-1)!;

  before(async () => {
    p = await startProxyApp({ GATELOG_UPSTREAM_TIMEOUT_MS: '10000', GATELOG_STREAM_IDLE_TIMEOUT_MS: String(IDLE_MS) });
    ({ fake, t, a, client } = p);
    noting = new LogNotingClient(t.baseUrl, a.key);
  });
  beforeEach(() => {
    fake.behave({ kind: 'ok' });
    fake.chat();
    noting.logId = null;
  });
  after(() => p.close());

  const TWO_CHOICES = {
    choices: [{ content: ['Red', ' apple', '.'] }, { content: ['Green', ' pear'], finishReason: 'length' }],
  };
  const EXPECTED_CHOICES = [
    [0, 'Red apple.', 'stop'],
    [1, 'Green pear', 'length'],
  ];
  const choiceSummary = (choices: Loose[]) =>
    choices.map((c) => [c.index, c.message.content, c.finish_reason] as [number, string, string]);

  it('n: 2 not streamed: the client gets both choices, and the log keeps both', async () => {
    fake.chat(TWO_CHOICES);
    const res = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [...MESSAGES], n: 2 })
      .withResponse();
    assert.equal(res.response.status, 200);
    assert.equal((lastSent().request.json as { n?: unknown }).n, 2, 'n went upstream');
    assert.deepEqual(choiceSummary(res.data.choices), EXPECTED_CHOICES);
    assert.deepEqual(res.data, JSON.parse(lastSent().sent[0].data), 'the answer is what the upstream sent');

    const log = await logOf(res.response.headers.get('x-gatelog-log-id'));
    assert.equal(log.status_code, 200);
    assert.equal(log.stream, false);
    assert.deepEqual(choiceSummary(JSON.parse(log.output).choices), EXPECTED_CHOICES);
    assert.equal(log.completion_message.content, 'Red apple.', 'choice 0 is the completion message');
  });

  it('n: 2 streamed: the client assembles both choices from interleaved chunks, and the log keeps both', async () => {
    fake.chat(TWO_CHOICES);
    const stream = noting.client.chat.completions.stream({ model: 'gpt-4o-mini', messages: [...MESSAGES], n: 2 });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    stream.on('chunk', (chunk) => chunks.push(chunk));
    const final = await stream.finalChatCompletion();
    assert.deepEqual(choiceSummary(final.choices), EXPECTED_CHOICES);
    const indexes = chunks.flatMap((c) => c.choices.map((choice) => choice.index));
    assert.deepEqual(indexes.slice(0, 4), [0, 1, 0, 1], 'the choices arrived interleaved');
    const finishes = chunks.flatMap((c) =>
      c.choices.filter((choice) => choice.finish_reason !== null).map((choice) => [choice.index, choice.finish_reason]),
    );
    assert.deepEqual(finishes, [
      [1, 'length'],
      [0, 'stop'],
    ]);
    assert.ok(
      chunks.every((c) => !c.usage),
      'the usage event gatelog asked for is not passed on',
    );

    const log = await logOf(noting.logId);
    assert.equal(log.status_code, 200);
    assert.equal(log.stream, true);
    const output = JSON.parse(log.output);
    assert.deepEqual(choiceSummary(output.choices), EXPECTED_CHOICES);
    assert.equal(output.usage.completion_tokens, 4, "the upstream's usage, kept");
    assert.equal(log.completion_message.content, 'Red apple.', 'choice 0 is the completion message');
  });

  it('n: 2 streamed with parallel tool calls in each choice: each choice assembled by tool-call index', async () => {
    const calls = {
      weather: { id: 'call_w', name: 'get_weather', arguments: ['{"ci', 'ty":"Pa', 'ris"}'] },
      time: { id: 'call_t', name: 'get_time', arguments: ['{"tz":', '"Europe/Paris"}'] },
      rome: { id: 'call_r', name: 'get_weather', arguments: ['{"city"', ':"Ro', 'me"}'] },
      news: { id: 'call_n', name: 'get_news', arguments: ['{"topic":"', 'sport', 's"}'] },
      oslo: { id: 'call_o', name: 'get_time', arguments: ['{"tz":"Europe/Oslo"}'] },
    };
    // Choice 1 has three calls: their indexes (0, 1, 2) repeat choice 0's, so only the pair (choice,
    // index) tells them apart.
    fake.chat({
      choices: [{ toolCalls: [calls.weather, calls.time] }, { toolCalls: [calls.rome, calls.news, calls.oslo] }],
    });
    const whole = (call: (typeof calls)['weather']) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments.join('') },
    });
    const expected = [
      [whole(calls.weather), whole(calls.time)],
      [whole(calls.rome), whole(calls.news), whole(calls.oslo)],
    ];
    const fn = (name: string) => ({ type: 'function' as const, function: { name, parameters: { type: 'object' } } });
    const tools = [fn('get_weather'), fn('get_time'), fn('get_news')];
    const stream = noting.client.chat.completions.stream({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Weather, time and news?' }],
      tools,
      parallel_tool_calls: true,
      n: 2,
    });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    stream.on('chunk', (chunk) => chunks.push(chunk));
    const final = await stream.finalChatCompletion();
    // The deltas arrived interleaved across choices and across calls: joining by position would mix them.
    const order = chunks.flatMap((c) =>
      c.choices.flatMap((choice) => (choice.delta.tool_calls ?? []).map((call) => `${choice.index}:${call.index}`)),
    );
    assert.deepEqual(order.slice(0, 6), ['0:0', '1:0', '0:1', '1:1', '0:0', '1:2'], order.join(' '));
    assert.deepEqual(
      final.choices.map((c) => shape(c.message.tool_calls as ToolCall[])),
      expected,
    );

    const log = await logOf(noting.logId);
    assert.equal(log.status_code, 200);
    const output = JSON.parse(log.output);
    assert.deepEqual(
      output.choices.map((c: Loose) => [c.index, c.finish_reason]),
      [
        [0, 'tool_calls'],
        [1, 'tool_calls'],
      ],
    );
    assert.deepEqual(
      output.choices.map((c: Loose) => shape(c.message.tool_calls)),
      expected,
    );
    assert.deepEqual(shape(log.completion_message.tool_calls), expected[0], "choice 0's calls");
    assert.deepEqual(shape(log.tool_calls), expected[0]);
    assert.deepEqual(log.tools, tools);
  });

  it('request_breakdown through the official client (not streamed): every field as §10 and §15 give it', async () => {
    const res = await client.chat.completions
      .create({
        model: 'gpt-4o-mini',
        messages: [...MESSAGES],
        temperature: 0.2,
        metadata: { plan: 'pro' },
        // @ts-expect-error -- a platform parameter: the client sends a field it does not know as it is
        request_breakdown: true,
      })
      .withResponse();
    assert.equal(res.response.status, 200);
    const { request_breakdown: rb, ...rest } = res.data as unknown as Record<string, Loose>;
    assert.deepEqual(rest, JSON.parse(lastSent().sent[0].data), 'the rest of the answer is the upstream’s');
    assert.equal(res.data.choices[0].message.content, HELLO);
    const sent = lastSent().request.json as Record<string, unknown>;
    assert.ok(!('request_breakdown' in sent) && !('metadata' in sent), 'platform parameters stay here');

    assert.deepEqual(Object.keys(rb).sort(), [
      'cached',
      'category',
      'completion_message',
      'completion_tokens',
      'cost',
      'full_request',
      'latency',
      'metadata',
      'model',
      'prompt_messages',
      'prompt_tokens',
      'routing_time',
      'scores',
      'sentiment_score',
      'status_code',
      'stream',
      'timestamp',
    ]);
    assert.equal(rb.prompt_tokens, 19);
    assert.equal(rb.completion_tokens, 4);
    near(rb.cost, (19 * PRICE.input + 4 * PRICE.output) / 1e6, 'cost');
    assert.deepEqual(rb.prompt_messages, MESSAGES);
    assert.equal(rb.completion_message.role, 'assistant');
    assert.equal(rb.completion_message.content, HELLO);
    assert.equal(rb.model, 'gpt-4o-mini');
    assert.equal(rb.cached, false);
    assert.equal(rb.status_code, 200);
    assert.equal(rb.stream, false);
    assert.deepEqual(rb.scores, {});
    assert.equal(rb.category, 'chat');
    assert.deepEqual(rb.metadata, { plan: 'pro' });
    assert.deepEqual(rb.full_request, sent, 'the request as sent upstream');
    assert.deepEqual(rb.full_request, { model: 'gpt-4o-mini', messages: MESSAGES, temperature: 0.2 });
    assert.equal(rb.sentiment_score, null);
    assert.equal(typeof rb.latency, 'number');
    assert.equal(typeof rb.routing_time, 'number');
    assert.ok(rb.latency >= 0 && rb.routing_time >= 0);

    // The breakdown is the call as its log has it.
    const log = await logOf(res.response.headers.get('x-gatelog-log-id'));
    assert.equal(new Date(rb.timestamp).getTime(), new Date(log.timestamp).getTime(), 'timestamp');
    assert.ok(Math.abs(rb.latency - log.latency) < 1e-3, `latency ${rb.latency} vs ${log.latency}`);
    assert.ok(Math.abs(rb.routing_time - log.routing_time) < 1e-3, `routing ${rb.routing_time} vs ${log.routing_time}`);
    near(log.cost, rb.cost, 'the log’s cost');
    assert.equal(log.prompt_tokens, rb.prompt_tokens);
    assert.equal(log.completion_tokens, rb.completion_tokens);
  });
});

describe('POST /api/chat/completions: exactly one log however a stream ends', () => {
  let p: ProxyTestApp;
  let fake: FakeUpstream;
  let t: TestApp;
  let a: Tenant;

  before(async () => {
    p = await startProxyApp({ GATELOG_UPSTREAM_TIMEOUT_MS: '10000', GATELOG_STREAM_IDLE_TIMEOUT_MS: String(IDLE_MS) });
    ({ fake, t, a } = p);
  });
  beforeEach(() => {
    fake.behave({ kind: 'ok' });
    fake.chat();
  });
  after(() => p.close());

  const post = (body: Record<string, unknown>, signal?: AbortSignal) =>
    fetch(`${t.baseUrl}/api/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal,
    });

  /**
   * The logs of the customer (one per call of this test), once the call's own log is written and the
   * writer has had time for any other: a second log would be queued by now.
   */
  async function logsOfCustomer(customer: string, logId: string | null): Promise<Loose[]> {
    await logWhenWritten(t, a, logId);
    await sleep(500);
    await t.flush();
    const res = await api(t.baseUrl, 'GET', `/api/request-logs/list/?customer_identifier=${customer}&page_size=50`, {
      key: a.key,
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.count, res.body.results.length);
    return res.body.results;
  }

  /** The one log of the call answered by `res`, made as customer `customer`: there must be no other. */
  async function oneLog(customer: string, res: Response): Promise<Loose> {
    const logs = await logsOfCustomer(customer, res.headers.get('x-gatelog-log-id'));
    assert.equal(logs.length, 1, `one log per call: ${JSON.stringify(logs.map((l) => l.status_code))}`);
    assert.equal(logs[0].unique_id, res.headers.get('x-gatelog-log-id'));
    return logs[0];
  }

  const call = (customer: string, extra: Record<string, unknown> = {}, signal?: AbortSignal) =>
    post({ model: 'gpt-4o-mini', messages: MESSAGES, stream: true, customer_identifier: customer, ...extra }, signal);

  it('the client goes away mid-stream: one log, 499 "client disconnected"', async () => {
    const customer = `abort-${crypto.randomUUID()}`;
    fake.chat({ choices: [{ content: Array.from({ length: 40 }, (_, i) => `w${i} `) }], eventDelayMs: 50 });
    const controller = new AbortController();
    const res = await call(customer, {}, controller.signal);
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    let received = '';
    while (!received.includes('w2 ')) {
      const chunk = await reader.read();
      assert.ok(!chunk.done, 'the stream ended before the client went away');
      received += Buffer.from(chunk.value).toString('utf8');
    }
    controller.abort();
    const log = await oneLog(customer, res);
    assert.equal(log.status_code, 499);
    assert.equal(log.failed, true);
    assert.equal(log.error_message, 'client disconnected');
    assert.equal(fake.chats.at(-1)!.endedAt, null, 'the upstream never finished: it was aborted');
  });

  /** A stream the upstream broke: the client gets the error event and a clean end without [DONE]. */
  async function brokenStream(customer: string, code: string): Promise<{ message: string; log: Loose }> {
    const res = await call(customer);
    assert.equal(res.status, 200);
    const read = await readEvents(res);
    assert.equal(read.broke, false, 'the stream ends cleanly');
    assert.ok(!read.data.includes('[DONE]'), read.text);
    const error = JSON.parse(read.data.at(-1)!).error;
    assert.equal(error.type, 'upstream_error');
    assert.equal(error.code, code);
    const log = await oneLog(customer, res);
    assert.equal(log.failed, true);
    assert.equal(log.stream, true);
    return { message: error.message, log };
  }

  it('the upstream resets mid-stream: one log, 502 "connection … lost"', async () => {
    const customer = `reset-${crypto.randomUUID()}`;
    fake.behave({ kind: 'stream-reset', after: 3 }, 1);
    const { message, log } = await brokenStream(customer, 'stream_interrupted');
    assert.equal(log.status_code, 502);
    assert.equal(log.error_message, 'The connection to the provider was lost before its answer ended.');
    assert.equal(message, log.error_message, 'the client is told what the log says');
  });

  it('the upstream sends a malformed event: one log, 502 "not JSON"', async () => {
    const customer = `malformed-${crypto.randomUUID()}`;
    fake.behave({ kind: 'stream-malformed', after: 3 }, 1);
    const { message, log } = await brokenStream(customer, 'stream_interrupted');
    assert.equal(log.status_code, 502);
    assert.equal(log.error_message, 'The provider sent an event that is not JSON.');
    assert.equal(message, log.error_message);
  });

  it('the upstream falls silent: one log, 504 naming the idle timeout', async () => {
    const customer = `silent-${crypto.randomUUID()}`;
    fake.behave({ kind: 'stream-silent', after: 3 }, 1);
    const startedAt = performance.now();
    const { message, log } = await brokenStream(customer, 'stream_timeout');
    assert.ok(performance.now() - startedAt >= IDLE_MS, 'not before the idle timeout');
    assert.equal(log.status_code, 504);
    assert.equal(log.error_message, `The provider sent nothing for ${IDLE_MS} ms (GATELOG_STREAM_IDLE_TIMEOUT_MS).`);
    assert.equal(message, log.error_message);
    assert.equal(log.completion_message.content, 'Hello, ', 'the partial output');
  });

  it('the upstream sends an in-band error event: one log, 502 with the provider’s message', async () => {
    const customer = `inband-${crypto.randomUUID()}`;
    const providerMessage = 'The server had an error while processing your request. Sorry about that!';
    fake.behave({ kind: 'stream-error', after: 2, message: providerMessage }, 1);
    const res = await call(customer);
    assert.equal(res.status, 200);
    const read = await readEvents(res);
    assert.equal(read.broke, false);
    assert.deepEqual(
      read.data,
      fake.chats.at(-1)!.sent.map((e) => e.data),
      'the error event passes through as the upstream sent it, and nothing follows',
    );
    assert.equal(JSON.parse(read.data.at(-1)!).error.message, providerMessage);
    const log = await oneLog(customer, res);
    assert.equal(log.status_code, 502, 'the provider failed the answer: a bad gateway, not the client’s error');
    assert.equal(log.failed, true);
    assert.equal(log.error_message, providerMessage);
  });

  it('the upstream answers non-2xx before the stream: one log, its status and message', async () => {
    const customer = `refused-${crypto.randomUUID()}`;
    const error = {
      error: {
        message: "Invalid value for 'max_tokens': must be a positive integer.",
        type: 'invalid_request_error',
        param: 'max_tokens',
        code: 'invalid_value',
      },
    };
    fake.behave({ kind: 'fail', status: 400, body: error }, 1);
    const res = await call(customer);
    assert.equal(res.status, 400);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(await res.json(), error);
    const log = await oneLog(customer, res);
    assert.equal(log.status_code, 400);
    assert.equal(log.failed, true);
    assert.equal(log.error_message, error.error.message);
  });
});

describe('POST /api/chat/completions: a client that reads nothing', () => {
  let p: ProxyTestApp;
  let fake: FakeUpstream;
  let t: TestApp;
  let a: Tenant;

  before(async () => {
    p = await startProxyApp({ GATELOG_UPSTREAM_TIMEOUT_MS: '10000' });
    ({ fake, t, a } = p);
  });
  after(() => p.close());

  /** gatelog's heap and external memory (Buffers) from its /metrics, garbage collected first; and its RSS. */
  async function memory(): Promise<{ live: number; rss: number }> {
    gc();
    gc();
    const res = await fetch(`${t.baseUrl}/metrics`);
    assert.equal(res.status, 200);
    const text = await res.text();
    const heap = sample(text, 'gatelog_nodejs_heap_size_used_bytes');
    const external = sample(text, 'gatelog_nodejs_external_memory_bytes');
    const rss = sample(text, 'gatelog_process_resident_memory_bytes');
    assert.ok(heap !== null && external !== null && rss !== null, 'gatelog exports its memory');
    return { live: heap + external, rss };
  }

  it('pauses the upstream, and its memory does not grow with the unread answer', async () => {
    // 64 MB in 32 KB events: more than the socket buffers between the fake and gatelog and the client.
    const piece = 'x'.repeat(32 * 1024);
    const events = 2000;
    const answerBytes = events * piece.length;
    fake.chat({ choices: [{ content: Array.from({ length: events }, () => piece) }] });
    const customer = `unread-${crypto.randomUUID()}`;
    const req = http.request(`${t.baseUrl}/api/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
    });
    req.end(JSON.stringify({ model: 'gpt-4o-mini', messages: MESSAGES, stream: true, customer_identifier: customer }));
    // The answer is never read: no listener takes its data, so the socket's buffers fill and stay full.
    // Whatever is asserted, the client goes away at the end (else gatelog's stream would stay open).
    let res: http.IncomingMessage;
    let before: { live: number; rss: number };
    let now: { live: number; rss: number };
    let written: number;
    const exchange = () => fake.chats.at(-1)!;
    try {
      [res] = (await once(req, 'response')) as [http.IncomingMessage];
      assert.equal(res.statusCode, 200);
      // The fake made its whole answer before its headers: what follows is only what the stream holds.
      before = await memory();
      // Until the fake has written nothing for 2 s: it is blocked, not slow (at most 60 s on a busy machine).
      written = exchange().sent.length;
      let stillSince = performance.now();
      for (const startedAt = performance.now(); performance.now() - stillSince < 2000;) {
        assert.ok(performance.now() - startedAt < 60_000, `the fake kept writing: ${exchange().sent.length} events`);
        await sleep(200);
        if (exchange().sent.length !== written) {
          written = exchange().sent.length;
          stillSince = performance.now();
        }
      }
      now = await memory();
    } finally {
      req.destroy();
    }
    const writtenBytes = written * piece.length;
    const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
    const report = `heap+external grew ${mb(now.live - before.live)}, RSS ${mb(now.rss - before.rss)}, while the fake wrote ${mb(writtenBytes)} of ${mb(answerBytes)}`;
    assert.equal(exchange().endedAt, null, `the fake could not finish its answer: ${report}`);
    assert.ok(writtenBytes < answerBytes / 2, report);
    // What the stream holds is its buffers and the log's capped copy (1 MB), not the answer.
    assert.ok(now.live - before.live < answerBytes / 16, report);
    assert.ok(now.rss - before.rss < answerBytes / 4, report);

    // The client went away: the upstream call is aborted, and the call's one log is a 499.
    const log = await logWhenWritten(t, a, String(res.headers['x-gatelog-log-id']));
    assert.equal(log.status_code, 499);
    assert.equal(log.error_message, 'client disconnected');
    for (let i = 0; i < 100 && exchange().closedEarlyAt === null; i++) await sleep(20);
    assert.notEqual(exchange().closedEarlyAt, null, 'the upstream call was aborted');
  });
});
