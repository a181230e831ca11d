/**
 * Limits on what one client may hold: the time to send a request (408), a body over the limit (a 413
 * the client can read while still sending) — on every route that takes a body.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { request as undiciRequest } from 'undici';
import { JSON_BODY_LIMIT } from '../../src/app.js';
import { MAX_AUDIO_BYTES } from '../../src/gateway/transcription/request.js';
import { audioPath } from '../support/audio.js';
import { api, startApp, type TestApp } from '../support/harness.js';
import { servedRoutes } from '../support/routes.js';
import { whilePolling, stallBoundMs } from '../support/responsive.js';

/** Opens a connection, sends `head`, then one byte every `everyMs`; resolves with what came back and when. */
function trickle(baseUrl: string, head: string, everyMs: number) {
  const { hostname, port } = new URL(baseUrl);
  const started = performance.now();
  return new Promise<{ text: string; closedAfterMs: number }>((resolve) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(head));
    const timer = setInterval(() => socket.writable && socket.write('a'), everyMs);
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => (text += chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ text, closedAfterMs: performance.now() - started });
    });
  });
}

/** Sends `head` and up to `body` bytes on a new connection; resolves with everything that came back. */
function exchange(baseUrl: string, head: string, body: Buffer) {
  const { hostname, port } = new URL(baseUrl);
  return new Promise<string>((resolve) => {
    let text = '';
    const socket = net.connect(Number(port), hostname, () => {
      socket.write(head);
      socket.write(body);
    });
    const timer = setTimeout(() => socket.destroy(), 5000);
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => {
      text += chunk;
      // The whole answer is in once its JSON envelope has closed.
      if (/\r\n\r\n\{.*\}$/s.test(text)) socket.destroy();
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(text);
    });
  });
}

describe('request limits', () => {
  let t: TestApp;
  let key: string;
  before(async () => {
    t = await startApp({ env: { GATELOG_REQUEST_TIMEOUT_MS: '1000' } });
    ({ key } = await t.tenant());
  });
  after(() => t.close());

  it('a body sent one byte at a time gets a 408 in the envelope and its connection closed', async () => {
    const head =
      `POST /api/request-logs/create/ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{';
    const health = setInterval(() => void api(t.baseUrl, 'GET', '/health'), 50);
    const started = performance.now();
    const probe = api(t.baseUrl, 'GET', '/health');
    const result = await trickle(t.baseUrl, head, 100);
    clearInterval(health);
    assert.ok((await probe).status === 200 && performance.now() - started < 5000);
    assert.ok(result.closedAfterMs < 3000, `closed after ${result.closedAfterMs} ms`);
    assert.match(result.text, /^HTTP\/1\.1 408/);
    assert.match(result.text, /"code":"request_timeout"/);
  });

  it('a slow body after a 401 is not held either', async () => {
    const head =
      'POST /api/request-logs/create/ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer nope\r\n' +
      'Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{';
    const result = await trickle(t.baseUrl, head, 100);
    assert.match(result.text, /^HTTP\/1\.1 401/);
    assert.ok(result.closedAfterMs < 3000, `closed after ${result.closedAfterMs} ms`);
  });

  it('a body over the limit gets a 413 the sending client can read, every time', async () => {
    const body = Buffer.alloc(21 * 1024 * 1024, 'a');
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${t.baseUrl}/api/request-logs/create/`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body,
      });
      assert.equal(res.status, 413);
      const parsed = (await res.json()) as { error: { code: string } };
      assert.equal(parsed.error.code, 'payload_too_large');
    }
    // Streamed without a length: the limit is found while reading.
    const res = await undiciRequest(`${t.baseUrl}/api/request-logs/create/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: Readable.from(
        (function* () {
          for (let i = 0; i < 22; i++) yield Buffer.alloc(1024 * 1024, 'a');
        })(),
      ),
    });
    assert.equal(res.statusCode, 413);
    assert.equal(((await res.body.json()) as { error: { code: string } }).error.code, 'payload_too_large');
  });

  const bodyRoutes = () =>
    [...servedRoutes(t.app.printRoutes({ commonPrefix: false }))]
      .filter((r) => /^(POST|PATCH|PUT|DELETE) /.test(r))
      .map((r) => {
        const [method, pattern] = r.split(' ');
        return { method, path: pattern.replace(/\{[^}]+\}/g, 'x1'), form: pattern.includes('/audio/') };
      });

  it('every route that takes a body refuses one over its limit with a 413 the sender can read', async () => {
    const routes = bodyRoutes();
    assert.ok(routes.length >= 20, `${routes.length} routes`);
    const wav = fs.readFileSync(audioPath('hello.wav'));
    for (const { method, path, form } of routes) {
      let head: string;
      let body: Buffer;
      if (form) {
        // A file one byte over the audio limit, in a form whose length is declared honestly.
        const boundary = 'limitboundary';
        const file = Buffer.concat([wav, Buffer.alloc(MAX_AUDIO_BYTES + 1 - wav.length)]);
        body = Buffer.concat([
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n` +
              `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n` +
              'Content-Type: audio/wav\r\n\r\n',
          ),
          file,
          Buffer.from(`\r\n--${boundary}--\r\n`),
        ]);
        head =
          `${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
          `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${body.length}\r\n\r\n`;
      } else {
        // Declared over the limit: refused before a byte of it is read.
        body = Buffer.alloc(64 * 1024, 'a');
        head =
          `${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${JSON_BODY_LIMIT + 1}\r\n\r\n`;
      }
      const text = await exchange(t.baseUrl, head, body);
      assert.match(text, /^HTTP\/1\.1 413 /, `${method} ${path}: ${text.slice(0, 200)}`);
      assert.match(text, form ? /"code":"file_too_large"/ : /"code":"payload_too_large"/, `${method} ${path}`);
    }
  });

  it('every route that takes a body refuses one sent too slowly with a 408 and closes its connection', async () => {
    const results = await Promise.all(
      bodyRoutes().map(async ({ method, path, form }) => {
        const type = form ? 'multipart/form-data; boundary=b' : 'application/json';
        const head =
          `${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
          `Content-Type: ${type}\r\nContent-Length: 100000\r\n\r\n${form ? '--b\r\n' : '{'}`;
        return { route: `${method} ${path}`, ...(await trickle(t.baseUrl, head, 100)) };
      }),
    );
    for (const r of results) {
      assert.match(r.text, /^HTTP\/1\.1 408 /, `${r.route}: ${r.text.slice(0, 200)}`);
      assert.ok(r.closedAfterMs < 4000, `${r.route}: closed after ${r.closedAfterMs} ms`);
    }
  });
});

describe('large logs in lists', () => {
  let t: TestApp;
  let key: string;
  const BIG = 19 * 1024 * 1024;
  before(async () => {
    t = await startApp();
    ({ key } = await t.tenant());
    for (let i = 0; i < 5; i++) {
      const res = await api(t.baseUrl, 'POST', '/api/request-logs/create/', {
        key,
        body: {
          model: 'gpt-4o',
          input: [{ role: 'user', content: `${i}`.padEnd(BIG, 'x') }],
          output: 'short',
          tools: [{ type: 'function', function: { name: 'f', description: 'd'.repeat(20_000) } }],
        },
      });
      assert.equal(res.status, 201, res.text.slice(0, 200));
    }
    await t.flush();
  });
  after(() => t.close());

  it('lists a page of them with bounded previews, naming what was cut', async () => {
    const { result: res, slowestMs } = await whilePolling(t.baseUrl, () =>
      api(t.baseUrl, 'GET', '/api/request-logs/list/', { key }),
    );
    assert.ok(slowestMs < stallBoundMs(), `/health took ${slowestMs.toFixed(0)} ms meanwhile`);
    assert.equal(res.status, 200);
    assert.equal(res.body.results.length, 5);
    assert.ok(res.text.length < 1024 * 1024, `the page is ${res.text.length} characters`);
    for (const item of res.body.results) {
      assert.equal(item.input.length, 8192);
      assert.equal(item.output, '"short"');
      assert.equal(item.prompt_messages, null);
      assert.deepEqual(item.completion_message, { role: 'assistant', content: 'short' });
      assert.equal(item.tools, null);
      assert.deepEqual(item.truncated_fields.sort(), ['input', 'prompt_messages', 'tools']);
    }
  });

  it('reads a field whole when include_fields names it, within a budget per page', async () => {
    const small = await api(t.baseUrl, 'GET', '/api/request-logs/list/?include_fields=input,model&page_size=3', {
      key,
    });
    assert.equal(small.status, 200);
    assert.equal(small.body.results.length, 3);
    for (const item of small.body.results) {
      assert.deepEqual(Object.keys(item).sort(), ['input', 'model', 'unique_id']);
      assert.ok(item.input.length > BIG);
    }
    const tooMuch = await api(t.baseUrl, 'GET', '/api/request-logs/list/?include_fields=input', { key });
    assert.equal(tooMuch.status, 400);
    assert.equal(tooMuch.body.error.code, 'page_too_large');
    assert.equal(tooMuch.body.error.param, 'include_fields');
    const one = await api(t.baseUrl, 'GET', `/api/request-logs/${small.body.results[0].unique_id}/`, { key });
    assert.equal(one.status, 200);
    assert.ok(one.body.input.length > BIG, 'a single log is read whole');
    assert.equal(one.body.truncated_fields, undefined);
  });
});
