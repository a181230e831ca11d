/**
 * Backpressure released (docs/api.md "Chat completions", streaming): a client that stops reading for a
 * moment holds the provider back, and once it reads again it gets the rest of the answer — every event
 * and the stream's last one ([DONE], message_stop, response.completed) — and the log is a 200. On every
 * streamed route: a chat completion, one with a Claude model (translated), Anthropic's Messages API,
 * the Responses API, and a chat completion replayed from the response cache. The client is node:http,
 * which pauses its response (its socket stops reading) for a while and then reads everything.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import { api } from '../support/harness.js';
import { type FakeAnthropic, startFakeAnthropic } from '../support/fake-anthropic.js';
import { logWhenWritten, type ProxyTestApp, startProxyApp } from '../support/proxy-app.js';

/** Pauses from a blink to longer than the provider's idle timeout below (a held-back provider is not silent). */
const PAUSES_MS = [10, 300, 2000, 5000];
const IDLE_TIMEOUT_MS = 3000;
/** The reported case: 5,000 events of 8 KB on the chat route; 1,000 on the others (far past every buffer). */
const CHAT_EVENTS = 5000;
const OTHER_EVENTS = 1000;
/** The slow reader: 500 events of 8 KB (20 MB with the closing events) read at 4 MB/s, against an idle timeout of 0.5 s. */
const SLOW_EVENTS = 500;
const SLOW_BYTES_PER_S = 4 * 1024 * 1024;
/** No byte for this long after the client reads again: the stream is stuck. */
const STUCK_MS = 15_000;

/** Event `i`'s text: its number, then filler to 8 KB — so the test sees which events arrived, in order. */
const piece = (i: number) => `${String(i).padStart(5, '0')}${'x'.repeat(8 * 1024 - 5)}`;
const pieces = (n: number) => Array.from({ length: n }, (_, i) => piece(i));

interface PausedRead {
  status: number;
  text: string;
  logId: string | null;
}

/** Posts `body`, leaves the answer unread for `pauseMs`, then reads it to its end. */
function pausedRead(url: string, headers: Record<string, string>, body: unknown, pauseMs: number): Promise<PausedRead> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } });
    req.on('error', reject);
    req.on('response', (res) => {
      res.pause();
      const chunks: Buffer[] = [];
      let received = 0;
      let lastByteAt = performance.now();
      let watch: NodeJS.Timeout | undefined;
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        received += chunk.length;
        lastByteAt = performance.now();
      });
      res.on('error', reject);
      res.on('end', () => {
        clearInterval(watch);
        resolve({
          status: res.statusCode ?? 0,
          text: Buffer.concat(chunks).toString('utf8'),
          logId: (res.headers['x-gatelog-log-id'] as string | undefined) ?? null,
        });
      });
      setTimeout(() => {
        lastByteAt = performance.now();
        res.resume();
        watch = setInterval(() => {
          if (performance.now() - lastByteAt < STUCK_MS) return;
          clearInterval(watch);
          res.destroy();
          reject(new Error(`paused ${pauseMs} ms: ${received} bytes, then nothing for ${STUCK_MS} ms`));
        }, 250);
      }, pauseMs);
    });
    req.end(JSON.stringify(body));
  });
}

/** Posts `body` and reads the answer at about SLOW_BYTES_PER_S, in small steps: slow, never idle for long. */
function throttledRead(url: string, headers: Record<string, string>, body: unknown): Promise<PausedRead> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } });
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        res.pause();
        setTimeout(() => res.resume(), Math.ceil((chunk.length / SLOW_BYTES_PER_S) * 1000));
      });
      res.on('error', reject);
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          text: Buffer.concat(chunks).toString('utf8'),
          logId: (res.headers['x-gatelog-log-id'] as string | undefined) ?? null,
        }),
      );
    });
    req.end(JSON.stringify(body));
  });
}

/** The numbers of the events that arrived, in order (each event's text starts `"<field>":"<number>x`). */
function numbered(text: string, field: string): number[] {
  return [...text.matchAll(new RegExp(`"${field}":"(\\d{5})x`, 'g'))].map((m) => Number(m[1]));
}

const upTo = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('a stream held back by its client resumes when the client reads again', () => {
  let p: ProxyTestApp;
  let claude: FakeAnthropic;
  const auth = () => ({ authorization: `Bearer ${p.a.key}` });

  before(async () => {
    claude = await startFakeAnthropic();
    p = await startProxyApp({
      GATELOG_ANTHROPIC_BASE_URL: claude.baseUrl,
      GATELOG_STREAM_IDLE_TIMEOUT_MS: String(IDLE_TIMEOUT_MS),
    });
    const res = await api(p.t.baseUrl, 'POST', '/api/provider-keys/', {
      key: p.a.key,
      body: { provider: 'anthropic', api_key: 'sk-ant-resume-0001' },
    });
    assert.equal(res.status, 201, res.text);
  });
  after(async () => {
    await p?.close();
    await claude?.close();
  });

  /** Every pause at once (each its own call): each read must pass `check` and its log be a 200. */
  async function everyPause(
    app: ProxyTestApp,
    call: (pauseMs: number) => Promise<PausedRead>,
    check: (text: string, what: string) => void,
  ) {
    const reads = await Promise.all(PAUSES_MS.map(call));
    for (const [at, read] of reads.entries()) {
      const what = `paused ${PAUSES_MS[at]} ms`;
      assert.equal(read.status, 200, what);
      check(read.text, what);
      const log = await logWhenWritten(app.t, app.a, read.logId);
      assert.equal(log.status_code, 200, `${what}: ${String(log.error_message)}`);
    }
  }

  /** Each event's text, numbered `field`, all `n` in order, and the stream's `last` event at its end. */
  const allEvents = (field: string, n: number, last: RegExp) => (text: string, what: string) => {
    assert.deepEqual(numbered(text, field), upTo(n), `${what}: every event, in order`);
    assert.match(text, last, `${what}: the stream's last event`);
  };

  it('a chat completion', async () => {
    p.fake.chat({ choices: [{ content: pieces(CHAT_EVENTS) }] });
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Long.' }], stream: true };
    await everyPause(
      p,
      (ms) => pausedRead(`${p.t.baseUrl}/api/chat/completions`, auth(), body, ms),
      allEvents('content', CHAT_EVENTS, /data: \[DONE\]\n\n$/),
    );
  });

  it('a chat completion with a Claude model (translated)', async () => {
    claude.message({ content: [{ type: 'text', text: pieces(OTHER_EVENTS) }] });
    const body = { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Long.' }], stream: true };
    await everyPause(
      p,
      (ms) => pausedRead(`${p.t.baseUrl}/api/chat/completions`, auth(), body, ms),
      allEvents('content', OTHER_EVENTS, /data: \[DONE\]\n\n$/),
    );
  });

  it("Anthropic's Messages API", async () => {
    claude.message({ content: [{ type: 'text', text: pieces(OTHER_EVENTS) }] });
    const headers = { 'x-api-key': p.a.key, 'anthropic-version': '2023-06-01' };
    const body = { model: 'claude-sonnet-4-5', max_tokens: 64_000, messages: [{ role: 'user', content: 'Long.' }] };
    await everyPause(
      p,
      (ms) => pausedRead(`${p.t.baseUrl}/api/anthropic/v1/messages`, headers, { ...body, stream: true }, ms),
      allEvents('text', OTHER_EVENTS, /event: message_stop\ndata: [^\n]*\n\n$/),
    );
  });

  it('the Responses API', async () => {
    p.fake.respond({ text: pieces(OTHER_EVENTS) });
    const body = { model: 'gpt-4o-mini', input: 'Long.', stream: true };
    await everyPause(
      p,
      (ms) => pausedRead(`${p.t.baseUrl}/api/responses`, auth(), body, ms),
      allEvents('delta', OTHER_EVENTS, /event: response\.completed\ndata: [^\n]*\n\n$/),
    );
  });

  it('a slow reader of a long answer gets all of it, however long it reads after the provider ended', async () => {
    // The Responses API ends with events that each hold the whole text (4 MB here): the provider ends
    // once the last is taken from it, megabytes before the client has read them, and the client then
    // reads them for several times the idle timeout, never idle for it.
    const slow = await startProxyApp({ GATELOG_STREAM_IDLE_TIMEOUT_MS: '500' });
    try {
      slow.fake.respond({ text: pieces(SLOW_EVENTS) });
      const body = { model: 'gpt-4o-mini', input: 'Long.', stream: true };
      const started = performance.now();
      const read = await throttledRead(
        `${slow.t.baseUrl}/api/responses`,
        { authorization: `Bearer ${slow.a.key}` },
        body,
      );
      const seconds = (performance.now() - started) / 1000;
      assert.equal(read.status, 200, read.text.slice(0, 500));
      allEvents(
        'delta',
        SLOW_EVENTS,
        /event: response\.completed\ndata: [^\n]*\n\n$/,
      )(read.text, `read over ${seconds.toFixed(1)} s`);
      const log = await logWhenWritten(slow.t, slow.a, read.logId);
      assert.equal(log.status_code, 200, String(log.error_message));
    } finally {
      await slow.close();
    }
  });

  it('a chat completion replayed from the response cache', async () => {
    // An app of its own: an answer is cached only when its log holds all of it, which takes a larger cap
    // than the other calls' logs should be written with.
    const cached = await startProxyApp({ GATELOG_LOG_MAX_BYTES: String(16 * 1024 * 1024) });
    try {
      cached.fake.chat({ choices: [{ content: pieces(OTHER_EVENTS) }] });
      const body = { model: 'gpt-4o', messages: [{ role: 'user', content: 'Long, cached.' }], cache_enabled: true };
      const stored = await api(cached.t.baseUrl, 'POST', '/api/chat/completions', { key: cached.a.key, body });
      assert.equal(stored.status, 200, stored.text);
      // The cache's write follows the answer.
      for (let waited = 0; ; waited += 50) {
        const probe = await api(cached.t.baseUrl, 'POST', '/api/chat/completions', { key: cached.a.key, body });
        if (probe.headers.get('x-gatelog-cache') === 'HIT') break;
        assert.ok(waited < 5000, 'the answer was cached');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const asked = cached.fake.chats.length;
      // The replay tells the whole text as one event, then [DONE].
      const whole = pieces(OTHER_EVENTS).join('');
      const headers = { authorization: `Bearer ${cached.a.key}` };
      await everyPause(
        cached,
        (ms) => pausedRead(`${cached.t.baseUrl}/api/chat/completions`, headers, { ...body, stream: true }, ms),
        (text, what) => {
          assert.ok(text.includes(`"content":"${whole}"`), `${what}: the whole text`);
          assert.match(text, /data: \[DONE\]\n\n$/, `${what}: [DONE]`);
        },
      );
      assert.equal(cached.fake.chats.length, asked, 'answered from the cache');
    } finally {
      await cached.close();
    }
  });
});
