import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, before, beforeEach, describe, it } from 'node:test';
import OpenAI from 'openai';
import { LogNotingClient } from '../support/noting-client.js';
import { type Tenant, type TestApp } from '../support/harness.js';
import { DEFAULT_CHAT_CONTENT, DEFAULT_CHAT_USAGE, type FakeUpstream } from '../support/fake-upstream.js';
import { logWhenWritten, PROVIDER_KEY, type ProxyTestApp, startProxyApp } from '../support/proxy-app.js';
import { stallBoundMs } from '../support/responsive.js';

const HELLO = DEFAULT_CHAT_CONTENT.join('');
const MESSAGES = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Say hello.' },
] as const;
/** Per million tokens, from the price catalog (OpenAI's public prices). */
const PRICES = {
  'gpt-4o-mini': { input: 0.15, cached: 0.075, output: 0.6 },
  'gpt-4o': { input: 2.5, cached: 1.25, output: 10 },
};
const PLATFORM_PARAMS = ['customer_identifier', 'metadata', 'request_breakdown', 'customer_credentials', 'disable_log'];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const near = (actual: number, expected: number, what: string) =>
  assert.ok(
    Math.abs(actual - expected) <= 1e-9 + Math.abs(expected) * 1e-6,
    `${what}: ${actual}, expected ${expected}`,
  );

interface SseEvent {
  /** When the event's line arrived (performance.now()). */
  at: number;
  /** The text after `data: `, as received. */
  data: string;
}

interface SseRead {
  text: string;
  events: SseEvent[];
  comments: string[];
  /** Whether the body ended cleanly (false when `until` stopped the reading first, or it broke). */
  ended: boolean;
  /** How the body broke instead of ending (the connection cut before the response's end), or null. */
  broke: string | null;
  reader: ReadableStreamDefaultReader<Uint8Array>;
}

/**
 * Reads a server-sent event stream line by line as it arrives, until it ends, breaks, or `until` says to
 * stop. The contract's streams never break: even a failed one ends with an error event and a clean end.
 */

async function readSse(res: Response, until?: (events: SseEvent[]) => boolean): Promise<SseRead> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const read: SseRead = { text: '', events: [], comments: [], ended: false, broke: null, reader };
  let pending = '';
  for (;;) {
    let chunk: Awaited<ReturnType<typeof reader.read>>;
    try {
      chunk = await reader.read();
    } catch (err) {
      read.broke = `${String(err)} after:\n${read.text.slice(-600)}`;
      return read;
    }
    if (chunk.done) {
      read.ended = true;
      return read;
    }
    const piece = decoder.decode(chunk.value, { stream: true });
    read.text += piece;
    pending += piece;
    for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      if (line.startsWith('data: ')) read.events.push({ at: performance.now(), data: line.slice(6) });
      else if (line.startsWith(':')) read.comments.push(line);
    }
    if (until?.(read.events)) return read;
  }
}

/** A stream read to its end, which must be a clean one. */
async function readWhole(res: Response): Promise<SseRead> {
  const read = await readSse(res);
  assert.equal(read.broke, null, 'the stream broke instead of ending');
  return read;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- chunks are read as the JSON they are
const parse = (event: SseEvent): any => JSON.parse(event.data);
const hasContent = (event: SseEvent) => event.data !== '[DONE]' && Boolean(parse(event).choices?.[0]?.delta?.content);

describe('POST /api/chat/completions', () => {
  let p: ProxyTestApp;
  let fake: FakeUpstream;
  let t: TestApp;
  let a: Tenant;
  let client: OpenAI;
  /** The official client again, noting the log each answer names (the stream helpers hide the response). */
  let noting: LogNotingClient;

  const post = (body: Record<string, unknown>, signal?: AbortSignal) =>
    fetch(`${t.baseUrl}/api/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal,
    });
  const logOf = (id: string | null) => logWhenWritten(t, a, id);
  const lastSent = () => fake.chats.at(-1)!;
  const sentJson = () => lastSent().request.json as Record<string, unknown>;

  before(async () => {
    p = await startProxyApp({ GATELOG_UPSTREAM_TIMEOUT_MS: '5000' });
    ({ fake, t, a, client } = p);
    noting = new LogNotingClient(t.baseUrl, a.key);
  });
  beforeEach(() => {
    fake.behave({ kind: 'ok' });
    fake.chat();
    noting.logId = null;
  });
  after(() => p.close());

  describe('not streaming', () => {
    it('passes the JSON through unchanged, sends no platform parameter upstream, and logs the call', async () => {
      const res = await client.chat.completions
        .create({
          model: 'gpt-4o-mini',
          messages: [...MESSAGES],
          temperature: 0.3,
          max_tokens: 50,
          metadata: { feature: 'greeting' },
          customer_identifier: 'cust-1',
        } as OpenAI.ChatCompletionCreateParamsNonStreaming)
        .withResponse();
      assert.equal(res.response.status, 200);
      assert.deepEqual(res.data, JSON.parse(lastSent().sent[0].data), 'the answer is what the upstream sent');
      assert.equal(res.response.headers.get('x-request-id'), `req_${fake.requests.length}`);
      const sent = lastSent().request;
      assert.equal(sent.path, '/v1/chat/completions');
      assert.equal(sent.headers.authorization, `Bearer ${PROVIDER_KEY}`);
      assert.deepEqual(sent.json, { model: 'gpt-4o-mini', messages: MESSAGES, temperature: 0.3, max_tokens: 50 });

      const log = await logOf(res.response.headers.get('x-gatelog-log-id'));
      assert.equal(log.log_type, 'chat');
      assert.equal(log.log_method, 'inference');
      assert.equal(log.model, 'gpt-4o-mini');
      assert.equal(log.provider_id, 'openai');
      assert.equal(log.status_code, 200);
      assert.equal(log.failed, false);
      assert.equal(log.stream, false);
      assert.equal(log.time_to_first_token, null, 'no first token without a stream');
      assert.deepEqual(log.prompt_messages, MESSAGES);
      assert.equal(log.completion_message.role, 'assistant');
      assert.equal(log.completion_message.content, HELLO);
      assert.equal(log.temperature, 0.3);
      assert.equal(log.max_tokens, 50);
      assert.equal(log.customer_identifier, 'cust-1');
      assert.equal(log.metadata.feature, 'greeting');
      assert.notEqual(log.metadata.usage_source, 'estimated');
      assert.equal(log.prompt_tokens, DEFAULT_CHAT_USAGE.prompt_tokens);
      assert.equal(log.completion_tokens, DEFAULT_CHAT_USAGE.completion_tokens);
      const price = PRICES['gpt-4o-mini'];
      near(log.cost, (19 * price.input + 4 * price.output) / 1e6, 'cost');
      const output = JSON.parse(log.output);
      assert.equal(output.choices[0].message.content, HELLO);
      assert.equal(output.choices[0].finish_reason, 'stop');
      assert.deepEqual(output.usage, res.data.usage);
    });

    it('adds request_breakdown (stream false), the rest of the answer unchanged', async () => {
      const res = await post({
        model: 'gpt-4o-mini',
        messages: MESSAGES,
        request_breakdown: true,
        metadata: { k: 'v' },
        customer_identifier: 'cust-2',
      });
      assert.equal(res.status, 200);
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the answer is read as the JSON it is
      const body: any = await res.json();
      const { request_breakdown: rb, ...rest } = body;
      assert.deepEqual(rest, JSON.parse(lastSent().sent[0].data));
      for (const field of [
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
      ]) {
        assert.ok(field in rb, `request_breakdown.${field}`);
      }
      assert.equal(rb.stream, false);
      assert.equal(rb.category, 'chat');
      assert.equal(rb.cached, false);
      assert.equal(rb.model, 'gpt-4o-mini');
      assert.equal(rb.prompt_tokens, 19);
      assert.equal(rb.completion_tokens, 4);
      assert.equal(rb.status_code, 200);
      assert.deepEqual(rb.metadata, { k: 'v' });
      assert.deepEqual(rb.scores, {});
      near(rb.cost, (19 * PRICES['gpt-4o-mini'].input + 4 * PRICES['gpt-4o-mini'].output) / 1e6, 'cost');
      assert.deepEqual(rb.full_request, { model: 'gpt-4o-mini', messages: MESSAGES });
      assert.deepEqual(rb.full_request, sentJson(), 'the request as sent upstream');
    });

    it('forwards unknown fields unchanged, byte for byte back, with the caller’s own provider key', async () => {
      const customerKey = 'sk-customer-key-SECRETSECRET';
      const extra = {
        logit_bias: { '50256': -100 },
        some_future_field: { nested: [1, 'x', null, { deep: true }] },
        store: true,
        user: 'end-user-7',
        top_p: 0.5,
      };
      const res = await post({
        model: 'gpt-4o',
        messages: MESSAGES,
        ...extra,
        customer_identifier: 'c',
        metadata: { a: '1' },
        request_breakdown: false,
        customer_credentials: { openai: { api_key: customerKey } },
        disable_log: false,
      });
      assert.equal(res.status, 200);
      assert.equal(await res.text(), lastSent().sent[0].data, 'the upstream bytes, unchanged');
      assert.deepEqual(sentJson(), { model: 'gpt-4o', messages: MESSAGES, ...extra });
      for (const param of PLATFORM_PARAMS) assert.ok(!(param in sentJson()), `${param} stays here`);
      assert.equal(lastSent().request.headers.authorization, `Bearer ${customerKey}`);
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.used_custom_credential, true);
      assert.ok(!JSON.stringify(log).includes('SECRETSECRET'), 'the key is never stored');
    });

    it('passes an upstream error through with its status and body, and logs it failed', async () => {
      const error = {
        error: { message: 'Rate limit reached for gpt-4o', type: 'requests', param: null, code: 'rate_limit_exceeded' },
      };
      fake.behave({ kind: 'fail', status: 429, body: error }, 1);
      const res = await post({ model: 'gpt-4o', messages: MESSAGES });
      assert.equal(res.status, 429);
      assert.deepEqual(await res.json(), error);
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.status_code, 429);
      assert.equal(log.failed, true);
      assert.equal(log.cost, 0);
    });
  });

  describe('streaming', () => {
    it('writes each event as it arrives, byte for byte, and asks upstream for the usage it keeps to itself', async () => {
      // The pause between events is long enough to tell one event from the next on a busy machine.
      fake.chat({ eventDelayMs: 150 });
      const res = await post({ model: 'gpt-4o-mini', messages: MESSAGES, stream: true });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
      assert.equal(res.headers.get('cache-control'), 'no-cache');
      assert.equal(res.headers.get('content-length'), null);
      assert.equal(res.headers.get('x-request-id'), `req_${fake.requests.length}`);
      const read = await readWhole(res);
      const sent = lastSent().sent;
      assert.deepEqual(
        (sentJson().stream_options as { include_usage?: unknown } | undefined)?.include_usage,
        true,
        'usage is always asked for',
      );
      // Everything the upstream sent but its usage-only event, unchanged and in order.
      const usageOnly = sent.filter((e) => e.data !== '[DONE]' && JSON.parse(e.data).choices.length === 0);
      assert.equal(usageOnly.length, 1);
      assert.deepEqual(
        read.events.map((e) => e.data),
        sent.filter((e) => !usageOnly.includes(e)).map((e) => e.data),
      );
      assert.equal(read.events.at(-1)!.data, '[DONE]');
      // Each event reached the client before the upstream sent the next one: nothing was held back.
      const passed = sent.filter((e) => !usageOnly.includes(e));
      passed.forEach((event, i) => {
        const next = sent[sent.indexOf(event) + 1];
        if (next === undefined) return;
        const late = read.events[i].at - event.at;
        assert.ok(read.events[i].at < next.at, `event ${i} arrived ${late.toFixed(0)} ms after it was sent`);
      });
      const firstContent = read.events.find(hasContent)!;
      assert.ok(firstContent.at < sent.at(-2)!.at - 300, 'the first content arrived well before the last event');

      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.stream, true);
      assert.equal(log.status_code, 200);
      assert.equal(log.failed, false);
      assert.equal(log.prompt_tokens, 19, "the upstream's usage, which the client never saw");
      assert.equal(log.completion_tokens, 4);
      assert.notEqual(log.metadata.usage_source, 'estimated');
      assert.equal(log.completion_message.content, HELLO);
      const output = JSON.parse(log.output);
      assert.equal(output.object, 'chat.completion');
      assert.equal(output.id, parse(read.events[0]).id);
      assert.equal(output.choices.length, 1);
      assert.equal(output.choices[0].message.content, HELLO);
      assert.equal(output.choices[0].finish_reason, 'stop');
      assert.equal(output.usage.prompt_tokens, 19);
      assert.ok(log.time_to_first_token >= 0 && log.time_to_first_token <= log.latency);
    });

    it('passes the usage event on when the client asks for it (official client)', async () => {
      const res = await client.chat.completions
        .create({
          model: 'gpt-4o-mini',
          messages: [...MESSAGES],
          stream: true,
          stream_options: { include_usage: true },
        })
        .withResponse();
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of res.data) chunks.push(chunk);
      assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), HELLO);
      const last = chunks.at(-1)!;
      assert.deepEqual(last.choices, []);
      assert.equal(last.usage?.prompt_tokens, 19);
      assert.equal(last.usage?.completion_tokens, 4);
      assert.equal(chunks.length, lastSent().sent.length - 1, 'every event but [DONE]');
      const log = await logOf(res.response.headers.get('x-gatelog-log-id'));
      assert.equal(log.prompt_tokens, 19);
      assert.equal(log.stream, true);

      // And the official client, not asking, sees no usage at all.
      const plain = await client.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [...MESSAGES],
        stream: true,
      });
      const plainChunks: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of plain) plainChunks.push(chunk);
      assert.ok(plainChunks.length > 0);
      assert.ok(plainChunks.every((c) => c.choices.length === 1 && !c.usage));
    });

    it('ends with one request_breakdown event before [DONE], shaped for the official stream helpers', async () => {
      const res = await post({ model: 'gpt-4o-mini', messages: MESSAGES, stream: true, request_breakdown: true });
      const read = await readWhole(res);
      assert.equal(read.events.at(-1)!.data, '[DONE]');
      const breakdown = parse(read.events.at(-2)!);
      assert.deepEqual(Object.keys(breakdown).sort(), ['choices', 'created', 'id', 'model', 'object']);
      assert.equal(breakdown.id, parse(read.events[0]).id, "the stream's id");
      assert.equal(breakdown.object, 'chat.completion.chunk');
      assert.equal(breakdown.model, 'gpt-4o-mini');
      assert.equal(typeof breakdown.created, 'number');
      assert.equal(breakdown.choices.length, 1);
      const { request_breakdown: rb, ...choice } = breakdown.choices[0];
      assert.deepEqual(choice, { index: 0, delta: {}, finish_reason: null });
      assert.equal(rb.stream, true);
      assert.equal(rb.category, 'chat');
      assert.equal(rb.model, 'gpt-4o-mini');
      assert.equal(rb.prompt_tokens, 19);
      assert.equal(rb.completion_tokens, 4);
      near(rb.cost, (19 * PRICES['gpt-4o-mini'].input + 4 * PRICES['gpt-4o-mini'].output) / 1e6, 'cost');
      assert.deepEqual(rb.full_request, sentJson(), 'the request as sent upstream');
      for (const param of PLATFORM_PARAMS) assert.ok(!(param in sentJson()), `${param} stays here`);
      // Before it, the upstream's events but the usage-only one (not asked for).
      const upstream = lastSent().sent.map((e) => e.data);
      assert.deepEqual(
        read.events.slice(0, -2).map((e) => e.data),
        upstream.slice(0, -2),
      );

      // The stream helper assembles the same completion, usage included, the breakdown notwithstanding.
      const stream = client.chat.completions.stream({
        model: 'gpt-4o-mini',
        messages: [...MESSAGES],
        stream_options: { include_usage: true },
        request_breakdown: true,
      } as Parameters<OpenAI['chat']['completions']['stream']>[0]);
      const final = await stream.finalChatCompletion();
      assert.equal(final.choices.length, 1);
      assert.equal(final.choices[0].message.content, HELLO);
      assert.equal(final.choices[0].finish_reason, 'stop');
      assert.equal(final.usage?.prompt_tokens, 19);
      assert.equal(final.usage?.completion_tokens, 4);
    });

    it('assembles parallel tool calls by their index, for the client and in the log', async () => {
      fake.chat({
        choices: [
          {
            toolCalls: [
              { id: 'call_weather', name: 'get_weather', arguments: ['{"ci', 'ty":"Pa', 'ris"}'] },
              { id: 'call_time', name: 'get_time', arguments: ['{"tz":', '"Europe/Paris"}'] },
            ],
          },
        ],
      });
      const tools: OpenAI.ChatCompletionTool[] = [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          },
        },
        {
          type: 'function',
          function: { name: 'get_time', parameters: { type: 'object', properties: { tz: { type: 'string' } } } },
        },
      ];
      const stream = noting.client.chat.completions.stream({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'Weather and time in Paris?' }],
        tools,
        tool_choice: 'auto',
        parallel_tool_calls: true,
      });
      const final = await stream.finalChatCompletion();
      const expected = [
        { id: 'call_weather', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'call_time', type: 'function', function: { name: 'get_time', arguments: '{"tz":"Europe/Paris"}' } },
      ];
      const shape = (calls: { id: string; type: string; function: { name: string; arguments: string } }[]) =>
        calls.map(({ id, type, function: { name, arguments: args } }) => ({
          id,
          type,
          function: { name, arguments: args },
        }));
      assert.deepEqual(shape(final.choices[0].message.tool_calls as never), expected);
      assert.equal(final.choices[0].finish_reason, 'tool_calls');

      const log = await logOf(noting.logId);
      assert.deepEqual(log.tools, tools);
      assert.equal(log.tool_choice, 'auto');
      assert.deepEqual(shape(log.completion_message.tool_calls), expected);
      assert.deepEqual(shape(log.tool_calls), expected);
      const output = JSON.parse(log.output);
      assert.deepEqual(shape(output.choices[0].message.tool_calls), expected);
      assert.equal(output.choices[0].finish_reason, 'tool_calls');
    });

    it('keeps every choice of n: 2 in the output, choice 0 as the completion message', async () => {
      fake.chat({
        choices: [{ content: ['Red', ' apple', '.'] }, { content: ['Green', ' pear'], finishReason: 'length' }],
      });
      const res = await post({ model: 'gpt-4o-mini', messages: MESSAGES, stream: true, n: 2 });
      const read = await readWhole(res);
      const indexes = read.events.slice(0, -1).map((e) => parse(e).choices[0].index);
      assert.deepEqual(indexes.slice(0, 4), [0, 1, 0, 1], 'the choices arrived interleaved');
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      const output = JSON.parse(log.output);
      assert.deepEqual(
        output.choices.map((c: { index: number; message: { content: string }; finish_reason: string }) => [
          c.index,
          c.message.content,
          c.finish_reason,
        ]),
        [
          [0, 'Red apple.', 'stop'],
          [1, 'Green pear', 'length'],
        ],
      );
      assert.equal(log.completion_message.content, 'Red apple.');
    });

    it('keeps a refusal in the log', async () => {
      const refusal = ["I'm sorry, ", "I can't ", 'help with that.'];
      fake.chat({ choices: [{ refusal }] });
      const stream = noting.client.chat.completions.stream({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'x' }],
      });
      const final = await stream.finalChatCompletion();
      assert.equal(final.choices[0].message.refusal, refusal.join(''));
      const log = await logOf(noting.logId);
      assert.equal(log.completion_message.refusal, refusal.join(''));
      assert.equal(JSON.parse(log.output).choices[0].message.refusal, refusal.join(''));
    });

    it('keeps cached and reasoning tokens, prices cached input lower, and logs the model that answered', async () => {
      const usage = { prompt_tokens: 2000, completion_tokens: 300, cached_tokens: 1200, reasoning_tokens: 100 };
      fake.chat({ usage, model: 'gpt-4o-2024-08-06' });
      const price = PRICES['gpt-4o'];
      const expected = ((2000 - 1200) * price.input + 1200 * price.cached + 300 * price.output) / 1e6;
      const uncached = (2000 * price.input + 300 * price.output) / 1e6;
      for (const stream of [true, false]) {
        const res = await post({ model: 'gpt-4o', messages: MESSAGES, stream });
        await res.text();
        const log = await logOf(res.headers.get('x-gatelog-log-id'));
        const where = stream ? 'streamed' : 'not streamed';
        assert.equal(log.model, 'gpt-4o-2024-08-06', where);
        assert.equal(log.prompt_tokens, 2000, where);
        assert.equal(log.completion_tokens, 300, where);
        const out = JSON.parse(log.output).usage;
        assert.equal(out.prompt_tokens_details.cached_tokens, 1200, where);
        assert.equal(out.completion_tokens_details.reasoning_tokens, 100, where);
        assert.ok(log.cost < uncached, `${where}: ${log.cost} < ${uncached}`);
        near(log.cost, expected, where);
      }
    });

    it('counts tokens locally when the upstream sends no usage, and says so', async () => {
      fake.chat({ usage: null });
      const res = await post({ model: 'gpt-4o-mini', messages: MESSAGES, stream: true });
      const read = await readWhole(res);
      assert.equal(read.events.at(-1)!.data, '[DONE]');
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.metadata.usage_source, 'estimated');
      assert.ok(log.prompt_tokens > 0 && log.completion_tokens > 0, `${log.prompt_tokens}/${log.completion_tokens}`);
      assert.ok(log.cost > 0);
    });

    it('times the first token from dispatch, and the rate from there', async () => {
      const delay = 400;
      fake.chat({ firstEventDelayMs: delay, eventDelayMs: 30 });
      const res = await post({ model: 'gpt-4o-mini', messages: MESSAGES, stream: true });
      await readWhole(res);
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.stream, true);
      assert.ok(log.time_to_first_token >= delay / 1000, `ttft ${log.time_to_first_token}`);
      assert.ok(log.time_to_first_token <= log.latency, `ttft ${log.time_to_first_token}, latency ${log.latency}`);
      assert.ok(log.latency - log.time_to_first_token >= 0.09, 'the three events after the first took 90 ms');
      assert.ok(log.tokens_per_second > 0);
      const rate = log.completion_tokens / (log.latency - log.time_to_first_token);
      assert.ok(Math.abs(log.tokens_per_second - rate) <= rate * 0.05, `${log.tokens_per_second} vs ${rate}`);
    });

    it('keeps only metrics with disable_log', async () => {
      const res = await post({ model: 'gpt-4o-mini', messages: MESSAGES, stream: true, disable_log: true });
      await readWhole(res);
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.input, null);
      assert.equal(log.output, null);
      assert.equal(log.prompt_messages, null);
      assert.equal(log.completion_message, null);
      assert.equal(log.prompt_tokens, 19);
      assert.equal(log.stream, true);
    });

    it('aborts the upstream at once when the client goes away, and logs a 499 with the partial completion', async () => {
      fake.chat({ choices: [{ content: Array.from({ length: 30 }, (_, i) => `w${i} `) }], eventDelayMs: 60 });
      const controller = new AbortController();
      const res = await post({ model: 'gpt-4o-mini', messages: MESSAGES, stream: true }, controller.signal);
      const read = await readSse(res, (events) => events.filter(hasContent).length >= 2);
      const received = read.events.filter(hasContent).map((e) => parse(e).choices[0].delta.content as string);
      controller.abort();
      const goneAt = performance.now();
      const exchange = lastSent();
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
      assert.equal(log.stream, true);
      const partial: string = log.completion_message.content;
      assert.ok(partial.startsWith(received.join('')), `the log holds what was sent: ${partial}`);
      const whole = Array.from({ length: 30 }, (_, i) => `w${i} `).join('');
      assert.ok(partial.length < whole.length, 'and not the whole completion');
      assert.ok(log.prompt_tokens > 0 && log.completion_tokens > 0, 'tokens estimated');
      assert.equal(log.metadata.usage_source, 'estimated');
      assert.equal(log.cost, 0, 'a failed call costs nothing (§4)');
    });

    it('honours backpressure: a client that does not read pauses the upstream', async () => {
      // 64 MB in 32 KB events: far more than every socket buffer between the fake and the client.
      const piece = 'x'.repeat(32 * 1024);
      fake.chat({ choices: [{ content: Array.from({ length: 2000 }, () => piece) }] });
      const controller = new AbortController();
      const res = await post({ model: 'gpt-4o-mini', messages: MESSAGES, stream: true }, controller.signal);
      await readSse(res, (events) => events.length >= 2);
      await sleep(1000);
      const written = lastSent().sent.length;
      controller.abort();
      assert.ok(written < 1000, `the upstream wrote ${written} of 2003 events to a client that read 2`);
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.status_code, 499);
    });

    it('passes a non-2xx upstream answer through as JSON, never as a stream', async () => {
      const error = {
        error: { message: 'Rate limit reached', type: 'requests', param: null, code: 'rate_limit_exceeded' },
      };
      fake.behave({ kind: 'fail', status: 429, body: error, headers: { 'x-request-id': 'req_limited' } }, 1);
      const res = await post({ model: 'gpt-4o-mini', messages: MESSAGES, stream: true });
      assert.equal(res.status, 429);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(res.headers.get('x-request-id'), 'req_limited');
      assert.deepEqual(await res.json(), error);
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.status_code, 429);
      assert.equal(log.failed, true);

      fake.behave({ kind: 'fail', status: 429, body: error }, 1);
      await assert.rejects(
        client.chat.completions.create({ model: 'gpt-4o-mini', messages: [...MESSAGES], stream: true }),
        (err: unknown) => err instanceof OpenAI.APIError && err.status === 429,
      );
    });

    it("passes the provider's 401 through as it came, saying it is the provider's, and logs whose key it refused", async () => {
      const error = {
        error: {
          message: 'Incorrect API key provided',
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_api_key',
        },
      };
      fake.behave({ kind: 'fail', status: 401, body: error }, 1);
      const res = await post({ model: 'gpt-4o-mini', messages: MESSAGES });
      assert.equal(res.status, 401);
      assert.equal(res.headers.get('x-gatelog-error-source'), 'provider');
      assert.deepEqual(await res.json(), error);
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(
        log.error_message,
        "Provider 'openai' refused the key registered for it in gatelog (replace it with POST /api/provider-keys/): Incorrect API key provided",
      );
      // gatelog's own refusal of a key carries no such header.
      const own = await fetch(`${t.baseUrl}/api/chat/completions`, {
        method: 'POST',
        headers: { authorization: 'Bearer gl_not_a_key', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: MESSAGES }),
      });
      assert.equal(own.status, 401);
      assert.equal(own.headers.get('x-gatelog-error-source'), null);
    });

    for (const kind of ['stream-reset', 'stream-malformed'] as const) {
      it(`ends with a stream_interrupted error event and no [DONE] when the upstream ${kind === 'stream-reset' ? 'resets' : 'sends a malformed event'}`, async () => {
        // Three events: the role, "Hello" and ", ".
        fake.behave({ kind, after: 3 }, 1);
        fake.chat({ eventDelayMs: 20 });
        const res = await post({ model: 'gpt-4o-mini', messages: MESSAGES, stream: true });
        assert.equal(res.status, 200);
        const read = await readSse(res);
        assert.ok(!read.text.includes('[DONE]'), read.text);
        assert.deepEqual(
          read.events.slice(0, -1).map((e) => e.data),
          lastSent()
            .sent.slice(0, 3)
            .map((e) => e.data),
          'what came before the fault, then the error',
        );
        const error = parse(read.events.at(-1)!).error;
        assert.equal(error.type, 'upstream_error');
        assert.equal(error.code, 'stream_interrupted');
        assert.equal(typeof error.message, 'string');

        const log = await logOf(res.headers.get('x-gatelog-log-id'));
        assert.equal(log.status_code, 502);
        assert.equal(log.failed, true);
        assert.equal(log.completion_message.content, 'Hello, ');
        assert.equal(JSON.parse(log.output).choices[0].message.content, 'Hello, ');
        // Last, so that a broken end does not hide the rest: the client's stream ends, it is not cut off.
        assert.equal(read.broke, null, 'the stream ends cleanly after its error event');
        assert.ok(read.ended);
      });
    }

    it('passes an in-band error event through and fails the log', async () => {
      fake.behave({ kind: 'stream-error', after: 2, message: 'The server had an error processing your request.' }, 1);
      const res = await post({ model: 'gpt-4o-mini', messages: MESSAGES, stream: true });
      const read = await readSse(res);
      const sent = lastSent().sent.map((e) => e.data);
      assert.deepEqual(
        read.events.map((e) => e.data),
        sent,
        'the error event as the upstream sent it, and nothing after',
      );
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.failed, true);
      assert.ok(log.status_code >= 400, `status ${log.status_code}`);
      assert.equal(log.completion_message.content, 'Hello');
      assert.equal(read.broke, null, 'the stream ends cleanly after the error event');
    });
  });

  describe('validation', () => {
    it('refuses each invalid request with a 400 naming the field, sends nothing upstream, and logs it', async () => {
      const user = { role: 'user', content: 'hi' };
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ messages: [user] }, /^model$/],
        [{ model: '', messages: [user] }, /^model$/],
        [{ model: 42, messages: [user] }, /^model$/],
        [{ model: 'gpt-4o' }, /^messages$/],
        [{ model: 'gpt-4o', messages: [] }, /^messages$/],
        [{ model: 'gpt-4o', messages: 'hi' }, /^messages$/],
        [{ model: 'gpt-4o', messages: [user, 'hi'] }, /^messages\.1$/],
        [{ model: 'gpt-4o', messages: [user, null] }, /^messages\.1$/],
        [{ model: 'gpt-4o', messages: [{ role: 'robot', content: 'x' }] }, /^messages\.0(\.role)?$/],
        [{ model: 'gpt-4o', messages: [{ content: 'x' }] }, /^messages\.0(\.role)?$/],
        [{ model: 'gpt-4o', messages: [user], stream: 'true' }, /^stream$/],
        [{ model: 'gpt-4o', messages: [user], stream: 1 }, /^stream$/],
        [{ model: 'gpt-4o', messages: [user], n: 0 }, /^n$/],
        [{ model: 'gpt-4o', messages: [user], n: 129 }, /^n$/],
        [{ model: 'gpt-4o', messages: [user], n: 1.5 }, /^n$/],
        [{ model: 'gpt-4o', messages: [user], n: '2' }, /^n$/],
        [{ model: 'gpt-4o', messages: [user], stream_options: { include_usage: true } }, /^stream_options$/],
        [
          { model: 'gpt-4o', messages: [user], stream: false, stream_options: { include_usage: true } },
          /^stream_options$/,
        ],
      ];
      const forwarded = fake.requests.length;
      for (const [body, param] of cases) {
        const where = JSON.stringify(body);
        const res = await post(body);
        const answer = (await res.json()) as { error: { type: string; param: unknown } };
        assert.equal(res.status, 400, where);
        assert.equal(answer.error.type, 'invalid_request_error', where);
        assert.match(String(answer.error.param), param, where);
        const log = await logOf(res.headers.get('x-gatelog-log-id'));
        assert.equal(log.log_type, 'chat', where);
        assert.equal(log.status_code, 400, where);
        assert.equal(log.failed, true, where);
      }
      assert.equal(fake.requests.length, forwarded, 'nothing went upstream');
    });

    it('accepts every known role and n at its bounds', async () => {
      const messages = [
        { role: 'system', content: 's' },
        { role: 'developer', content: 'd' },
        { role: 'user', content: 'u' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: '{}' },
        { role: 'function', name: 'f', content: '{}' },
      ];
      for (const n of [1, 128]) {
        const res = await post({ model: 'gpt-4o', messages, n });
        assert.equal(res.status, 200, await res.text());
        assert.deepEqual(sentJson(), { model: 'gpt-4o', messages, n });
      }
    });
  });
});

describe('POST /api/chat/completions: keepalive, idle timeout and the log cap', () => {
  let p: ProxyTestApp;
  let fake: FakeUpstream;
  let t: TestApp;
  let a: Tenant;
  const IDLE_MS = 600;
  const LOG_MAX_BYTES = 4096;

  const post = (body: Record<string, unknown>) =>
    fetch(`${t.baseUrl}/api/chat/completions`, {
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
    fake.chat();
  });
  after(() => p.close());

  it('writes a keepalive comment while the upstream is quiet, and the stream still completes', async () => {
    fake.chat({ firstEventDelayMs: 350 });
    const res = await post({ model: 'gpt-4o-mini', messages: MESSAGES, stream: true });
    const read = await readWhole(res);
    assert.ok(read.comments.includes(': keepalive'), read.text.slice(0, 300));
    assert.ok(read.text.indexOf(': keepalive') < read.text.indexOf('data: '), 'before the first event');
    assert.equal(read.events.at(-1)!.data, '[DONE]');
    assert.equal(
      read.events
        .slice(0, -1)
        .map((e) => parse(e).choices[0]?.delta.content ?? '')
        .join(''),
      HELLO,
    );
  });

  it('ends a silent stream with stream_timeout and no [DONE], and logs a 504 with the partial output', async () => {
    fake.behave({ kind: 'stream-silent', after: 3 }, 1);
    const res = await post({ model: 'gpt-4o-mini', messages: MESSAGES, stream: true });
    const read = await readSse(res);
    assert.ok(!read.text.includes('[DONE]'));
    const error = parse(read.events.at(-1)!).error;
    assert.equal(error.type, 'upstream_error');
    assert.equal(error.code, 'stream_timeout');
    // From when the fake wrote its last event (the same clock): gatelog's idle time starts after that,
    // while the client may read that event late on a loaded machine.
    const silentFor = read.events.at(-1)!.at - fake.chats.at(-1)!.sent.at(-1)!.at;
    assert.ok(silentFor >= IDLE_MS, `the error came ${silentFor.toFixed(0)} ms after the last event was sent`);
    assert.ok(silentFor < IDLE_MS + 1000, `the error came ${silentFor.toFixed(0)} ms after the last event`);
    const log = await logOf(res.headers.get('x-gatelog-log-id'));
    assert.equal(log.status_code, 504);
    assert.equal(log.failed, true);
    assert.equal(log.completion_message.content, 'Hello, ');
    // Last, so that a broken end does not hide the rest: the client's stream ends, it is not cut off.
    assert.equal(read.broke, null, 'the stream ends cleanly after its error event');
  });

  it('ends a stream of only comments after GATELOG_STREAM_MAX_DURATION_MS, and logs a 504', async () => {
    // The idle timeout far above the pings' interval, so that a stall of the loaded machine does not end
    // the stream as idle before its duration is up.
    const limited = await startProxyApp({
      GATELOG_STREAM_MAX_DURATION_MS: '4000',
      GATELOG_STREAM_IDLE_TIMEOUT_MS: '2500',
    });
    try {
      limited.fake.chat();
      // Pings every 50 ms: never idle for the 2.5 s idle timeout, so only the duration ends it.
      limited.fake.behave({ kind: 'stream-pings', after: 3, everyMs: 50 }, 1);
      const started = performance.now();
      const res = await fetch(`${limited.t.baseUrl}/api/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${limited.a.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: MESSAGES, stream: true }),
      });
      const read = await readSse(res);
      assert.ok(performance.now() - started >= 4000, 'not before the longest a stream may last');
      assert.ok(!read.text.includes('[DONE]'));
      assert.ok(read.text.includes(': ping'), 'the comments were passed on');
      const error = parse(read.events.at(-1)!).error;
      assert.equal(error.code, 'stream_timeout');
      assert.match(error.message, /GATELOG_STREAM_MAX_DURATION_MS/);
      const log = await logWhenWritten(limited.t, limited.a, res.headers.get('x-gatelog-log-id'));
      assert.equal(log.status_code, 504);
      assert.equal(log.completion_message.content, 'Hello, ');
    } finally {
      await limited.close();
    }
  });

  it("caps the log's copy of a long completion, never the client's stream", async () => {
    const pieces = Array.from({ length: 40 }, (_, i) => `${String(i).padStart(4, '0')}${'y'.repeat(996)}`);
    fake.chat({ choices: [{ content: pieces }] });
    const res = await post({ model: 'gpt-4o-mini', messages: MESSAGES, stream: true });
    const read = await readWhole(res);
    const content = read.events
      .slice(0, -1)
      .map((e) => parse(e).choices[0]?.delta.content ?? '')
      .join('');
    assert.equal(content, pieces.join(''), 'the client got all 40,000 characters');
    const log = await logOf(res.headers.get('x-gatelog-log-id'));
    assert.equal(log.status_code, 200);
    assert.equal(log.completion_tokens, DEFAULT_CHAT_USAGE.completion_tokens);
    const stored = [log.output, JSON.stringify(log.completion_message)];
    for (const text of stored) {
      assert.ok(text === null || !text.includes(pieces.join('')), 'the whole completion is not stored');
      assert.ok(text === null || Buffer.byteLength(text) <= 2 * LOG_MAX_BYTES, `stored ${text?.length} characters`);
    }
  });
});
