/**
 * POST /api/anthropic/v1/messages streamed: Anthropic's events passed on as they arrive, the
 * official client's stream helpers, tokens and prices, request_breakdown, the client going away, an
 * Anthropic that breaks, refuses or falls quiet.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { logWhenWritten } from '../support/proxy-app.js';
import { dataOf, readSse } from '../support/sse.js';
import { assertClientDisconnected, assertContentNotKept, goAwayAndAssertAborted } from '../support/proxied-route.js';
import { near } from '../support/proxied-route.js';
import { type AnthropicRouteApp, client, fake, HELLO, last, logOf, MODEL, notedLogId } from './anthropic-route.js';
import { post, sentJson, SONNET, SYSTEM, useAnthropicRoute, USER } from './anthropic-route.js';

describe('POST /api/anthropic/v1/messages', () => {
  useAnthropicRoute({ GATELOG_UPSTREAM_TIMEOUT_MS: '5000' });

  describe('streaming', () => {
    it('passes every event through byte for byte, as it arrives, and logs the message put back together', async () => {
      fake.message({ eventDelayMs: 100 });
      const res = await post({ model: MODEL, max_tokens: 100, system: SYSTEM, messages: [USER], stream: true });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
      assert.equal(res.headers.get('cache-control'), 'no-cache');
      assert.equal(res.headers.get('x-request-id'), `req_fake${fake.exchanges.length}`);
      assert.equal(res.headers.get('request-id'), `req_fake${fake.exchanges.length}`);
      const read = await readSse(res);
      assert.equal(read.broke, null);
      const sent = last().sent;
      assert.equal(read.text, sent.map((e) => e.text).join(''), 'the bytes Anthropic sent, nothing else');
      // Each event reached the client before the next one was sent: nothing was held back.
      read.events.forEach((event, i) => {
        const next = sent[i + 1];
        if (next !== undefined)
          assert.ok(event.at < next.at, `event ${i} (${event.event}) arrived after the next was sent`);
      });

      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.stream, true);
      assert.equal(log.status_code, 200);
      assert.equal(log.model, MODEL);
      assert.deepEqual(log.prompt_messages, [{ role: 'system', content: SYSTEM }, USER]);
      assert.deepEqual(log.completion_message, { role: 'assistant', content: HELLO });
      // message_delta's counts are cumulative: they replace message_start's, never add to them.
      assert.equal(log.prompt_tokens, 21);
      assert.equal(log.completion_tokens, 6);
      near(log.cost, (21 * SONNET.input + 6 * SONNET.output) / 1e6, 'cost');
      const output = JSON.parse(log.output);
      assert.equal(output.id, `msg_fake${fake.exchanges.length}`);
      assert.deepEqual(output.content, [{ type: 'text', text: HELLO }]);
      assert.equal(output.stop_reason, 'end_turn');
      assert.equal(output.usage.output_tokens, 6);
      const firstText = read.events.find((e) => e.event === 'content_block_delta')!;
      assert.ok(firstText.at < read.events.at(-1)!.at - 200, 'the first text arrived well before the end');
      assert.ok(
        log.time_to_first_token >= 0.2,
        `ttft ${log.time_to_first_token}: after message_start, ping, block start`,
      );
      assert.ok(log.time_to_first_token <= log.latency);
      const rate = log.completion_tokens / (log.latency - log.time_to_first_token);
      assert.ok(Math.abs(log.tokens_per_second - rate) <= rate * 0.05, `${log.tokens_per_second} vs ${rate}`);
    });

    it('serves the official client’s stream helpers: text, tool input and thinking, and logs them', async () => {
      fake.message({
        content: [
          { type: 'thinking', thinking: ['The user wants ', 'the weather.'], signature: 'sig-abc' },
          { type: 'text', text: ['Checking', '.'] },
          { type: 'tool_use', id: 'toolu_02', name: 'get_weather', input: ['{"ci', 'ty": "Pa', 'ris"}'] },
        ],
      });
      const stream = client.messages.stream({
        model: MODEL,
        max_tokens: 2000,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
      });
      const texts: string[] = [];
      stream.on('text', (text) => texts.push(text));
      const final = await stream.finalMessage();
      assert.equal(texts.join(''), 'Checking.');
      assert.deepEqual(
        final.content.map((b) => b.type),
        ['thinking', 'text', 'tool_use'],
      );
      assert.deepEqual((final.content[2] as Anthropic.ToolUseBlock).input, { city: 'Paris' });
      assert.equal(final.stop_reason, 'tool_use');
      assert.equal(final.usage.output_tokens, 6);
      assert.equal(sentJson().stream, true);

      const log = await logOf(notedLogId);
      assert.deepEqual(log.completion_message, {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'toolu_02', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        ],
        thinking: 'The user wants the weather.',
      });
      const output = JSON.parse(log.output);
      assert.deepEqual(output.content, [
        { type: 'thinking', thinking: 'The user wants the weather.', signature: 'sig-abc' },
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'toolu_02', name: 'get_weather', input: { city: 'Paris' } },
      ]);
      assert.deepEqual(output.content, JSON.parse(JSON.stringify(final.content)), 'what the client assembled');
    });

    it('counts the four kinds of tokens, and prices cache reads and writes each at its own price', async () => {
      const usage = {
        input_tokens: 1000,
        cache_read_input_tokens: 3000,
        cache_creation_input_tokens: 2000,
        ephemeral_1h_input_tokens: 500,
        output_tokens: 500,
      };
      // Of the 2,000 tokens written to the cache, 500 for an hour (priced higher than for five minutes).
      const expected =
        (1000 * SONNET.input +
          3000 * SONNET.cacheRead +
          1500 * SONNET.cacheWrite +
          500 * SONNET.cacheWrite1h +
          500 * SONNET.output) /
        1e6;
      // Claude Sonnet 4 has one price; 4.5's is tiered by the prompt's size (priced by the catalog's own rules).
      for (const model of [MODEL, 'claude-sonnet-4-5-20250929']) {
        for (const stream of [false, true]) {
          fake.message({ usage, model });
          const res = await post({ model: 'claude-sonnet-4-5', max_tokens: 600, messages: [USER], stream });
          await res.text();
          const log = await logOf(res.headers.get('x-gatelog-log-id'));
          const where = `${model}, stream ${stream}`;
          assert.equal(log.model, model, `${where}: the model that answered`);
          assert.equal(log.prompt_tokens, 6000, where);
          assert.equal(log.completion_tokens, 500, where);
          near(log.cost, expected, where);
          const logged = JSON.parse(log.output).usage;
          assert.equal(logged.cache_read_input_tokens, 3000, where);
          assert.equal(logged.cache_creation_input_tokens, 2000, where);
        }
      }
    });

    it('sends request_breakdown as one event just before message_stop, which the client reads past', async () => {
      const res = await post({
        model: MODEL,
        max_tokens: 100,
        messages: [USER],
        stream: true,
        request_breakdown: true,
      });
      const read = await readSse(res);
      assert.deepEqual(
        read.events.slice(-2).map((e) => e.event),
        ['request_breakdown', 'message_stop'],
      );
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the event is read as the JSON it is
      const { type, request_breakdown: rb } = dataOf(read.events.at(-2)!) as { type: string; request_breakdown: any };
      assert.equal(type, 'request_breakdown');
      assert.equal(rb.stream, true);
      assert.equal(rb.model, MODEL);
      assert.equal(rb.prompt_tokens, 21);
      assert.equal(rb.completion_tokens, 6);
      assert.deepEqual(rb.completion_message, { role: 'assistant', content: HELLO });
      assert.deepEqual(rb.full_request, sentJson());
      near(rb.cost, (21 * SONNET.input + 6 * SONNET.output) / 1e6, 'cost');
      // Apart from it, Anthropic's events unchanged.
      const breakdown = read.text.indexOf('event: request_breakdown');
      const end = read.text.indexOf('\n\n', breakdown) + 2;
      assert.equal(
        read.text.slice(0, breakdown) + read.text.slice(end),
        last()
          .sent.map((e) => e.text)
          .join(''),
      );

      const stream = client.messages.stream({
        model: MODEL,
        max_tokens: 100,
        messages: [USER],
        request_breakdown: true,
      } as Anthropic.MessageStreamParams);
      const final = await stream.finalMessage();
      assert.deepEqual(final.content, [{ type: 'text', text: HELLO }]);
      assert.equal(final.usage.output_tokens, 6);
    });

    it('keeps only metrics with disable_log', async () => {
      const res = await post({ model: MODEL, max_tokens: 10, messages: [USER], stream: true, disable_log: true });
      await res.text();
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assertContentNotKept(log);
      assert.equal(log.prompt_tokens, 21);
    });

    it('aborts the upstream at once when the client goes away, and logs a 499 with the partial answer', async () => {
      const words = Array.from({ length: 30 }, (_, i) => `w${i} `);
      fake.message({ content: [{ type: 'text', text: words }], eventDelayMs: 60 });
      const controller = new AbortController();
      const res = await post({ model: MODEL, max_tokens: 100, messages: [USER], stream: true }, {}, controller.signal);
      const read = await readSse(res, (r) => r.events.filter((e) => e.event === 'content_block_delta').length >= 2);
      const received = read.events
        .filter((e) => e.event === 'content_block_delta')
        .map((e) => (dataOf(e).delta as { text: string }).text);
      const exchange = last();
      await goAwayAndAssertAborted(controller, exchange);

      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      const partial = assertClientDisconnected(log, received);
      assert.ok(partial.length < words.join('').length, 'and not the whole answer');
      assert.equal(log.prompt_tokens, 21, "message_start's input count");
      assert.ok(log.completion_tokens > 0, 'the output estimated');
      assert.equal(log.metadata.usage_source, 'estimated');
      assert.equal(log.cost, 0);
    });

    for (const kind of ['stream-reset', 'stream-malformed'] as const) {
      it(`ends with Anthropic's error event when the upstream ${kind === 'stream-reset' ? 'resets' : 'sends a malformed event'}`, async () => {
        // message_start, ping, the block's start, "Hello", ", ".
        fake.behave({ kind, after: 5 }, 1);
        const res = await post({ model: MODEL, max_tokens: 100, messages: [USER], stream: true });
        assert.equal(res.status, 200);
        const read = await readSse(res);
        assert.equal(read.broke, null, 'the stream ends cleanly after its error event');
        assert.ok(
          read.text.startsWith(
            last()
              .sent.slice(0, 5)
              .map((e) => e.text)
              .join(''),
          ),
        );
        const error = read.events.at(-1)!;
        assert.equal(error.event, 'error');
        assert.deepEqual(Object.keys(dataOf(error)).sort(), ['error', 'type']);
        assert.equal(dataOf(error).type, 'error');
        const { type, code, message } = dataOf(error).error as Record<string, unknown>;
        assert.equal(type, 'api_error');
        assert.equal(code, 'stream_interrupted');
        assert.equal(typeof message, 'string');
        assert.ok(!read.events.some((e) => e.event === 'message_stop'));

        const log = await logOf(res.headers.get('x-gatelog-log-id'));
        assert.equal(log.status_code, 502);
        assert.equal(log.failed, true);
        assert.equal(log.completion_message.content, 'Hello, ');
        assert.equal(log.prompt_tokens, 21);
      });
    }

    it('passes an in-band error event through, which the client raises, and fails the log', async () => {
      fake.behave({ kind: 'stream-error', after: 4 }, 1);
      const res = await post({ model: MODEL, max_tokens: 100, messages: [USER], stream: true });
      const read = await readSse(res);
      assert.equal(
        read.text,
        last()
          .sent.map((e) => e.text)
          .join(''),
        'the error as Anthropic sent it',
      );
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.failed, true);
      assert.equal(log.status_code, 502);
      assert.equal(log.error_message, 'Overloaded');
      assert.equal(log.completion_message.content, 'Hello');

      fake.behave({ kind: 'stream-error', after: 4 }, 1);
      const stream = client.messages.stream({ model: MODEL, max_tokens: 100, messages: [USER] });
      await assert.rejects(
        stream.finalMessage(),
        (err: unknown) => err instanceof Anthropic.APIError && err.type === 'overloaded_error',
      );
    });

    it('retries an overloaded Anthropic (529) before the stream began, and logs the attempt', async () => {
      fake.behave({ kind: 'error', status: 529, type: 'overloaded_error', message: 'Overloaded' }, 1);
      const before = fake.exchanges.length;
      const res = await post({
        model: MODEL,
        max_tokens: 100,
        messages: [USER],
        stream: true,
        retry_params: { retry_enabled: true, num_retries: 1, retry_after: 0.01 },
      });
      assert.equal(res.status, 200);
      const read = await readSse(res);
      assert.equal(
        read.text,
        last()
          .sent.map((e) => e.text)
          .join(''),
      );
      assert.equal(fake.exchanges.length, before + 2);
      assert.ok(!('retry_params' in sentJson()), 'retry_params stays here');
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.status_code, 200);
      assert.deepEqual(
        log.attempts.map((t: { status_code: number; error: string }) => [t.status_code, t.error]),
        [[529, 'Overloaded']],
      );
      assert.equal(log.completion_message.content, HELLO);
    });

    it('passes a non-2xx answer through as JSON, never as a stream', async () => {
      const message = 'Number of requests has exceeded your rate limit';
      fake.behave({ kind: 'error', status: 429, type: 'rate_limit_error', message }, 1);
      const res = await post({ model: MODEL, max_tokens: 100, messages: [USER], stream: true });
      assert.equal(res.status, 429);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      const body = (await res.json()) as { type: string; error: { type: string; message: string } };
      assert.deepEqual(body, JSON.parse(last().sent[0].text));
      assert.deepEqual([body.type, body.error.type, body.error.message], ['error', 'rate_limit_error', message]);
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.status_code, 429);
      assert.equal(log.stream, true);
      assert.equal(log.failed, true);
    });
  });
});

describe('POST /api/anthropic/v1/messages: keepalive and a silent stream', () => {
  let h: AnthropicRouteApp;
  const IDLE_MS = 600;
  useAnthropicRoute(
    { GATELOG_STREAM_IDLE_TIMEOUT_MS: String(IDLE_MS), GATELOG_STREAM_KEEPALIVE_MS: '100' },
    (app) => (h = app),
  );

  it('writes keepalive comments while Anthropic is quiet, and the official client reads past them', async () => {
    h.fake.message({ firstEventDelayMs: 350 });
    const client = new Anthropic({ apiKey: h.a.key, baseURL: `${h.t.baseUrl}/api/anthropic`, maxRetries: 0 });
    const final = await client.messages.stream({ model: MODEL, max_tokens: 10, messages: [USER] }).finalMessage();
    assert.deepEqual(final.content, [{ type: 'text', text: HELLO }]);

    h.fake.message({ firstEventDelayMs: 350 });
    const res = await fetch(`${h.t.baseUrl}/api/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': h.a.key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, max_tokens: 10, messages: [USER], stream: true }),
    });
    const read = await readSse(res);
    assert.ok(read.comments.includes(': keepalive'), read.text.slice(0, 200));
    assert.ok(read.text.indexOf(': keepalive') < read.text.indexOf('event: message_start'));
  });

  it('ends a silent stream with a timeout_error event, and logs a 504 with the partial answer', async () => {
    h.fake.behave({ kind: 'stream-silent', after: 5 }, 1);
    const res = await fetch(`${h.t.baseUrl}/api/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': h.a.key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, max_tokens: 10, messages: [USER], stream: true }),
    });
    const read = await readSse(res);
    assert.equal(read.broke, null);
    const error = read.events.at(-1)!;
    assert.equal(error.event, 'error');
    const { type, code } = dataOf(error).error as Record<string, unknown>;
    assert.equal(type, 'timeout_error');
    assert.equal(code, 'stream_timeout');
    const silentFor = error.at - h.fake.exchanges.at(-1)!.sent.at(-1)!.at;
    assert.ok(silentFor >= IDLE_MS, `the error came ${silentFor.toFixed(0)} ms after the last event`);
    const log = await logWhenWritten(h.t, h.a, res.headers.get('x-gatelog-log-id'));
    assert.equal(log.status_code, 504);
    assert.equal(log.completion_message.content, 'Hello, ');
  });
});
