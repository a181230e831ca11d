/**
 * Backpressure on Claude's streams (docs/api.md, streaming): a client that stops reading pauses
 * Anthropic — gatelog neither reads the whole answer into memory nor drops it — on the native route
 * POST /api/anthropic/v1/messages (events passed through) and on a chat completion with a Claude model
 * (events translated to chat.completion.chunk). When the client then goes away, the upstream call is
 * aborted and the log is a 499.
 */
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import { type FakeAnthropic, type MessagesExchange, startFakeAnthropic } from '../support/fake-anthropic.js';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';
import { logWhenWritten } from '../support/proxy-app.js';

const MODEL = 'claude-sonnet-4-5';
// 64 MB in 32 KB text deltas: far more than every socket buffer between the fake and the client.
const PIECE = 'x'.repeat(32 * 1024);
const PIECES = 2000;
/** message_start, ping, the block's start, its deltas, its stop, message_delta, message_stop. */
const EVENTS = PIECES + 6;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Reads the body until `marker` has arrived `times` times, then stops reading (without cancelling). */
async function readUntil(res: Response, marker: string, times: number): Promise<void> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const chunk = await reader.read();
    assert.ok(!chunk.done, `the stream ended before ${times} × ${marker}`);
    text += decoder.decode(chunk.value, { stream: true });
    if (text.split(marker).length - 1 >= times) return;
  }
}

/**
 * How many events the fake has written once it stops writing: the count unchanged for 700 ms (waiting
 * at most 20 s). A fake not held back writes all its events, and the count settles at the end.
 */
async function writtenWhenSettled(exchange: MessagesExchange): Promise<number> {
  let last = exchange.sent.length;
  let since = performance.now();
  const until = since + 20_000;
  while (performance.now() < until) {
    await sleep(100);
    const now = exchange.sent.length;
    if (now !== last) {
      last = now;
      since = performance.now();
    } else if (performance.now() - since >= 700) break;
  }
  return last;
}

async function closedEarly(exchange: MessagesExchange): Promise<void> {
  for (let i = 0; i < 300 && exchange.closedEarlyAt === null; i++) await sleep(10);
  assert.ok(exchange.closedEarlyAt !== null, 'the upstream call was aborted when the client went away');
}

describe('backpressure on Claude streams', () => {
  let fake: FakeAnthropic;
  let t: TestApp;
  let a: Tenant;

  before(async () => {
    fake = await startFakeAnthropic();
    t = await startApp({ env: { GATELOG_ANTHROPIC_BASE_URL: fake.baseUrl } });
    a = await t.tenant();
    const res = await api(t.baseUrl, 'POST', '/api/provider-keys/', {
      key: a.key,
      body: { provider: 'anthropic', api_key: 'sk-ant-backpressure-0001' },
    });
    assert.equal(res.status, 201, res.text);
    fake.message({ content: [{ type: 'text', text: Array.from({ length: PIECES }, () => PIECE) }] });
  });
  after(async () => {
    await t?.close();
    await fake?.close();
  });

  /**
   * Anthropic, writing to a client that read 2 events and stopped, wrote less than half of its events and did
   * not finish; the client goes away (`controller` aborts), the upstream call is closed and logged a 499.
   */
  async function assertHeldBackTillAborted(exchange: MessagesExchange, controller: AbortController, res: Response) {
    const written = await writtenWhenSettled(exchange);
    assert.ok(written < EVENTS / 2, `Anthropic wrote ${written} of ${EVENTS} events to a client that read 2`);
    assert.equal(exchange.endedAt, null, 'the answer is held back, not finished');
    controller.abort();
    await closedEarly(exchange);
    const log = await logWhenWritten(t, a, res.headers.get('x-gatelog-log-id'));
    assert.equal(log.status_code, 499);
  }

  it('pauses Anthropic on /api/anthropic/v1/messages while the client does not read', async () => {
    const controller = new AbortController();
    const res = await fetch(`${t.baseUrl}/api/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': a.key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model: MODEL,
        max_tokens: 64_000,
        messages: [{ role: 'user', content: 'A long answer.' }],
        stream: true,
      }),
      signal: controller.signal,
    });
    assert.equal(res.status, 200);
    await readUntil(res, 'event: content_block_delta', 2);
    const exchange = fake.exchanges.at(-1)!;
    await assertHeldBackTillAborted(exchange, controller, res);
  });

  it('pauses Anthropic on a translated chat completion while the client does not read', async () => {
    const controller = new AbortController();
    const res = await fetch(`${t.baseUrl}/api/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'A long answer.' }], stream: true }),
      signal: controller.signal,
    });
    assert.equal(res.status, 200);
    await readUntil(res, `"content":"${PIECE.slice(0, 16)}`, 2);
    const exchange = fake.exchanges.at(-1)!;
    assert.equal(exchange.request.path, '/v1/messages', 'translated to the Messages API');
    await assertHeldBackTillAborted(exchange, controller, res);
  });
});
