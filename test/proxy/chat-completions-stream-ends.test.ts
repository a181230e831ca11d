/**
 * POST /api/chat/completions streamed, and the ways a stream ends: exactly one log however it ends
 * (the client going away, the upstream resetting, sending a malformed or an error event, falling
 * silent, refusing), and what that log says; and the memory a stream no client reads costs.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, it } from 'node:test';
import { api } from '../support/harness.js';
import { logWhenWritten } from '../support/proxy-app.js';
import { readSse } from '../support/sse.js';
import { a, fake, sleep, t, useProxyApp } from '../support/proxied-route.js';
import { post } from './chat-completions-fixtures.js';

const MESSAGES = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Name two fruits.' },
] as const;
/** Short, so that the silent upstream's case ends soon; long enough that a busy machine is not silent. */
const IDLE_MS = 1500;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- logs are read as the JSON they are
type Loose = any;

/** The heap and Buffers the process holds once garbage is collected (the app runs in this process). */
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** A sample of gatelog's /metrics, or null when it is not there. */
function sample(text: string, name: string): number | null {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line === undefined ? null : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('POST /api/chat/completions: exactly one log however a stream ends', () => {
  useProxyApp({ GATELOG_UPSTREAM_TIMEOUT_MS: '10000', GATELOG_STREAM_IDLE_TIMEOUT_MS: String(IDLE_MS) });

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
    const read = await readSse(res);
    const data = read.events.map((e) => e.data);
    assert.equal(read.broke, null, 'the stream ends cleanly');
    assert.ok(!data.includes('[DONE]'), read.text);
    const error = JSON.parse(data.at(-1)!).error;
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
    const read = await readSse(res);
    const data = read.events.map((e) => e.data);
    assert.equal(read.broke, null);
    assert.deepEqual(
      data,
      fake.chats.at(-1)!.sent.map((e) => e.data),
      'the error event passes through as the upstream sent it, and nothing follows',
    );
    assert.equal(JSON.parse(data.at(-1)!).error.message, providerMessage);
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
  useProxyApp({ GATELOG_UPSTREAM_TIMEOUT_MS: '10000' });

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
