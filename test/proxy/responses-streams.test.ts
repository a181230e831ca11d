/**
 * POST /api/responses streamed: events passed on as they arrive, the request_breakdown event, the
 * client going away, a provider that refuses or breaks the stream or falls quiet, and the log's cap.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import { DEFAULT_RESPONSE_USAGE } from '../support/fake-responses.js';
import { dataOf, readSse } from '../support/sse.js';
import { assertClientDisconnected, BREAKDOWN_FIELDS, client, fake } from '../support/proxied-route.js';
import { goAwayAndAssertAborted, IDLE_MS, LOG_MAX_BYTES, logOf, near, noting } from '../support/proxied-route.js';
import { OPENAI_PLATFORM_PARAMS as PLATFORM_PARAMS, QUIET_STREAMS_ENV, useProxyApp } from '../support/proxied-route.js';
import { costOf, HELLO, isDelta, last, post, sentJson, upstreamEvents } from './responses-fixtures.js';

describe('POST /api/responses', () => {
  useProxyApp({ GATELOG_UPSTREAM_TIMEOUT_MS: '5000' });

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
      assert.deepEqual(JSON.parse(log.output), dataOf(read.events.at(-1)!).response, "the last event's response");
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
      const data = dataOf(breakdown);
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
      const read = await readSse(res, (read) => read.events.filter(isDelta).length >= 2, 'cancel');
      const received = read.events.filter(isDelta).map((e) => dataOf(e).delta as string);
      const exchange = last();
      await goAwayAndAssertAborted(controller, exchange);
      assert.equal(exchange.endedAt, null);

      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      const partial = assertClientDisconnected(log, received);
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
        const error = dataOf(end);
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
});

describe('POST /api/responses: idle timeout and the log cap', () => {
  useProxyApp(QUIET_STREAMS_ENV);

  it('writes keepalive comments while the upstream is quiet, and ends a silent stream with stream_timeout', async () => {
    fake.behave({ kind: 'stream-silent', after: 6 }, 1);
    const res = await post({ model: 'gpt-4o-mini', input: 'hi', stream: true });
    const read = await readSse(res);
    assert.ok(read.comments.includes(': keepalive'), read.text.slice(-300));
    const end = read.events.at(-1)!;
    assert.equal(end.event, 'error');
    assert.equal(dataOf(end).code, 'stream_timeout');
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
      .map((e) => dataOf(e).delta)
      .join('');
    assert.equal(text, pieces.join(''), 'the client got all 40,000 characters');
    assert.equal(dataOf(read.events.at(-1)!).response.output[0].content[0].text, pieces.join(''));
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
