/**
 * A stream's events reach the client as the very bytes the provider sent, however the provider's writes
 * cut them: at an event's end, inside an event, inside a line, inside a character of several bytes, a
 * provider's own comment between events. gatelog passes a chunk that began and ended between events on
 * as it came, and re-assembles the rest from the events' text: both must give the provider's bytes.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';
import { logWhenWritten, PROVIDER_KEY, registerProviderKey } from '../support/proxy-app.js';

const PIECES = ['Hé', 'llo, ', 'wörld ', '🙂', ' — ', 'naïve ', 'café', '.'];

const chunkEvent = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({
    id: 'chatcmpl-bytes',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'gpt-4o-mini',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  })}\n\n`;

const STREAM = [
  chunkEvent({ role: 'assistant', content: '' }),
  ...PIECES.map((content) => chunkEvent({ content })),
  ': the provider keeps the line open\n\n',
  chunkEvent({}, 'stop'),
  `data: ${JSON.stringify({
    id: 'chatcmpl-bytes',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'gpt-4o-mini',
    choices: [],
    usage: { prompt_tokens: 9, completion_tokens: 8, total_tokens: 17 },
  })}\n\n`,
  'data: [DONE]\n\n',
].join('');
const BYTES = Buffer.from(STREAM, 'utf8');

/** Where the provider's writes cut its stream, by byte offset: one way of each kind the test names. */
function cuts(): number[] {
  const at = new Set<number>();
  const events = STREAM.split('\n\n');
  let offset = 0;
  for (const [i, event] of events.entries()) {
    const length = Buffer.byteLength(event) + 2;
    if (i % 3 === 0) at.add(offset + length); // at an event's end
    if (i % 3 === 1) at.add(offset + Math.floor(length / 2)); // inside an event
    offset += length;
  }
  // Inside each character of several bytes.
  for (const piece of PIECES) {
    for (const char of piece) {
      if (Buffer.byteLength(char) < 2) continue;
      const start = BYTES.indexOf(Buffer.from(char));
      if (start >= 0) at.add(start + 1);
    }
  }
  return [...at].filter((c) => c > 0 && c < BYTES.length).sort((a, b) => a - b);
}

describe("a stream's bytes, as the provider sent them", () => {
  let provider: http.Server;
  let t: TestApp;
  let a: Tenant;

  before(async () => {
    provider = http.createServer((req, res) => {
      req.resume();
      req.on('end', async () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.socket?.setNoDelay(true);
        let from = 0;
        for (const to of [...cuts(), BYTES.length]) {
          res.write(BYTES.subarray(from, to));
          from = to;
          // Apart in time, so that most writes arrive as chunks of their own.
          await sleep(5);
        }
        res.end();
      });
    });
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    const { port } = provider.address() as AddressInfo;
    t = await startApp({ env: { GATELOG_OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1` } });
    a = await t.tenant();
    await registerProviderKey(t, a.key, { provider: 'openai', api_key: PROVIDER_KEY });
  });

  after(async () => {
    await t.close();
    provider.closeAllConnections();
    await new Promise<void>((resolve) => provider.close(() => resolve()));
  });

  it('passes every byte on unchanged, and logs the whole text', async () => {
    assert.ok(cuts().length > 10, 'the provider cuts its stream in many places');
    const res = await fetch(`${t.baseUrl}/api/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'Say hello.' }],
        stream: true,
        // Asked for by the client: gatelog passes every event on (else it holds the usage event back).
        stream_options: { include_usage: true },
      }),
    });
    assert.equal(res.status, 200);
    const received = Buffer.from(await res.arrayBuffer());
    assert.equal(received.toString('utf8'), STREAM);
    assert.ok(received.equals(BYTES), 'the same bytes');
    const log = await logWhenWritten(t, a, res.headers.get('x-gatelog-log-id'));
    const message = log.completion_message as { content: string };
    assert.equal(message.content, PIECES.join(''));
    assert.equal(log.completion_tokens, 8);
    const listed = await api(t.baseUrl, 'GET', `/api/request-logs/${String(log.unique_id)}/`, { key: a.key });
    assert.equal(listed.status, 200);
  });
});
