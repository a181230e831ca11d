/**
 * POST /api/chat/completions streamed, when it does not go to plan: the client goes away or does
 * not read, the upstream refuses or breaks the stream, falls quiet (keepalive, idle timeout, the
 * longest stream) — and the log's cap on a long completion.
 */
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import { DEFAULT_CHAT_USAGE } from '../support/fake-chat-answers.js';
import { logWhenWritten, startProxyApp } from '../support/proxy-app.js';
import { dataOf, readSse, readWholeSse } from '../support/sse.js';
import { assertClientDisconnected, client, fake, goAwayAndAssertAborted, IDLE_MS } from '../support/proxied-route.js';
import { LOG_MAX_BYTES, logOf, QUIET_STREAMS_ENV, sleep, t, useProxyApp } from '../support/proxied-route.js';
import { hasContent, HELLO, lastSent, MESSAGES, post } from './chat-completions-fixtures.js';

describe('POST /api/chat/completions', () => {
  useProxyApp({ GATELOG_UPSTREAM_TIMEOUT_MS: '5000' });

  describe('streaming', () => {
    it('aborts the upstream at once when the client goes away, and logs a 499 with the partial completion', async () => {
      fake.chat({ choices: [{ content: Array.from({ length: 30 }, (_, i) => `w${i} `) }], eventDelayMs: 60 });
      const controller = new AbortController();
      const res = await post({ model: 'gpt-4o-mini', messages: MESSAGES, stream: true }, controller.signal);
      const read = await readSse(res, (read) => read.events.filter(hasContent).length >= 2);
      const received = read.events.filter(hasContent).map((e) => dataOf(e).choices[0].delta.content as string);
      const exchange = lastSent();
      await goAwayAndAssertAborted(controller, exchange);
      assert.equal(exchange.endedAt, null);

      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      const partial = assertClientDisconnected(log, received);
      assert.equal(log.stream, true);
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
      await readSse(res, (read) => read.events.length >= 2);
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
        const error = dataOf(read.events.at(-1)!).error;
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
});

describe('POST /api/chat/completions: keepalive, idle timeout and the log cap', () => {
  useProxyApp(QUIET_STREAMS_ENV);

  it('writes a keepalive comment while the upstream is quiet, and the stream still completes', async () => {
    fake.chat({ firstEventDelayMs: 350 });
    const res = await post({ model: 'gpt-4o-mini', messages: MESSAGES, stream: true });
    const read = await readWholeSse(res);
    assert.ok(read.comments.includes(': keepalive'), read.text.slice(0, 300));
    assert.ok(read.text.indexOf(': keepalive') < read.text.indexOf('data: '), 'before the first event');
    assert.equal(read.events.at(-1)!.data, '[DONE]');
    assert.equal(
      read.events
        .slice(0, -1)
        .map((e) => dataOf(e).choices[0]?.delta.content ?? '')
        .join(''),
      HELLO,
    );
  });

  it('ends a silent stream with stream_timeout and no [DONE], and logs a 504 with the partial output', async () => {
    fake.behave({ kind: 'stream-silent', after: 3 }, 1);
    const res = await post({ model: 'gpt-4o-mini', messages: MESSAGES, stream: true });
    const read = await readSse(res);
    assert.ok(!read.text.includes('[DONE]'));
    const error = dataOf(read.events.at(-1)!).error;
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
      const error = dataOf(read.events.at(-1)!).error;
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
    const read = await readWholeSse(res);
    const content = read.events
      .slice(0, -1)
      .map((e) => dataOf(e).choices[0]?.delta.content ?? '')
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
