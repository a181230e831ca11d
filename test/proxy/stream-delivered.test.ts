/**
 * A stream's log says whether its answer reached the client (docs/api.md "How a stream ends"): a client
 * that closes its connection as soon as it has read the stream's last event — as Codex does on
 * `response.completed` — got its whole answer, and the log is a 200 with its tokens and cost, even when
 * the provider had not yet ended its response; a client that closes before the last event is a 499.
 * On every streamed route: a chat completion, one with a Claude model (translated), Anthropic's
 * Messages API, the Responses API, and a chat completion replayed from the response cache. The fakes
 * hold their connection open a while after the last event, as a provider may, so the client's close
 * comes first.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { api } from '../support/harness.js';
import { DEFAULT_USAGE } from '../support/fake-anthropic-answers.js';
import { type FakeAnthropic, startFakeAnthropic } from '../support/fake-anthropic.js';
import { DEFAULT_CHAT_USAGE } from '../support/fake-chat-answers.js';
import { DEFAULT_RESPONSE_USAGE } from '../support/fake-responses.js';
import { logWhenWritten, type ProxyTestApp, startProxyApp } from '../support/proxy-app.js';

/** The provider's response ends this long after its last event. */
const END_DELAY_MS = 1500;
/** Mid-stream: events this far apart, and the client leaves after the first few. */
const EVENT_DELAY_MS = 100;
const PIECES = Array.from({ length: 30 }, (_, i) => `piece ${i}. `);

interface Closed {
  status: number;
  text: string;
  logId: string | null;
}

/** Posts `body` and reads the answer until `until` matches what arrived, then closes the connection at once. */
function readThenClose(url: string, headers: Record<string, string>, body: unknown, until: RegExp): Promise<Closed> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } });
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      const done = () =>
        resolve({
          status: res.statusCode ?? 0,
          text,
          logId: (res.headers['x-gatelog-log-id'] as string | undefined) ?? null,
        });
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        if (!until.test(text)) return;
        res.socket.destroy();
        done();
      });
      res.on('error', () => undefined);
      res.on('end', () => reject(new Error(`the stream ended before ${String(until)}:\n${text.slice(-400)}`)));
    });
    req.end(JSON.stringify(body));
  });
}

describe("a stream's log: done once its last event reached the client, else a 499", () => {
  let p: ProxyTestApp;
  let claude: FakeAnthropic;
  const auth = () => ({ authorization: `Bearer ${p.a.key}` });
  const claudeHeaders = () => ({ 'x-api-key': p.a.key, 'anthropic-version': '2023-06-01' });
  const chatBody = (model: string) => ({ model, messages: [{ role: 'user', content: 'Hi.' }], stream: true });
  const messagesBody = { model: 'claude-sonnet-4-5', max_tokens: 1024, messages: [{ role: 'user', content: 'Hi.' }] };

  before(async () => {
    claude = await startFakeAnthropic();
    p = await startProxyApp({ GATELOG_ANTHROPIC_BASE_URL: claude.baseUrl });
    const res = await api(p.t.baseUrl, 'POST', '/api/provider-keys/', {
      key: p.a.key,
      body: { provider: 'anthropic', api_key: 'sk-ant-delivered-0001' },
    });
    assert.equal(res.status, 201, res.text);
  });
  after(async () => {
    await p?.close();
    await claude?.close();
  });

  /** The log of a client that left right after the last event: whole, with the tokens the provider gave. */
  async function whole(read: Closed, tokens: { prompt: number; completion: number }) {
    assert.equal(read.status, 200);
    const log = await logWhenWritten(p.t, p.a, read.logId);
    assert.equal(log.status_code, 200, `logged ${log.status_code} ${String(log.error_message)}`);
    assert.equal(log.error_message, null);
    assert.equal(log.prompt_tokens, tokens.prompt);
    assert.equal(log.completion_tokens, tokens.completion);
    assert.ok(typeof log.cost === 'number' && log.cost > 0, `cost counted: ${String(log.cost)}`);
  }

  /** The log of a client that left mid-stream. */
  async function gone(read: Closed) {
    const log = await logWhenWritten(p.t, p.a, read.logId);
    assert.equal(log.status_code, 499);
    assert.equal(log.error_message, 'client disconnected');
  }

  describe('closed right after the last event', () => {
    it('a chat completion ([DONE])', async () => {
      p.fake.chat({ endDelayMs: END_DELAY_MS });
      const read = await readThenClose(
        `${p.t.baseUrl}/api/chat/completions`,
        auth(),
        chatBody('gpt-4o-mini'),
        /data: \[DONE\]\n\n/,
      );
      const exchange = p.fake.chats.at(-1)!;
      assert.equal(exchange.endedAt, null, 'the provider had not ended its response');
      await whole(read, { prompt: DEFAULT_CHAT_USAGE.prompt_tokens, completion: DEFAULT_CHAT_USAGE.completion_tokens });
    });

    it('a chat completion with a Claude model ([DONE], told from message_stop)', async () => {
      claude.message({ endDelayMs: END_DELAY_MS });
      const read = await readThenClose(
        `${p.t.baseUrl}/api/chat/completions`,
        auth(),
        chatBody('claude-sonnet-4-5'),
        /data: \[DONE\]\n\n/,
      );
      assert.equal(claude.exchanges.at(-1)!.endedAt, null, 'the provider had not ended its response');
      await whole(read, { prompt: DEFAULT_USAGE.input_tokens, completion: DEFAULT_USAGE.output_tokens });
    });

    it("Anthropic's Messages API (message_stop)", async () => {
      claude.message({ endDelayMs: END_DELAY_MS });
      const read = await readThenClose(
        `${p.t.baseUrl}/api/anthropic/v1/messages`,
        claudeHeaders(),
        { ...messagesBody, stream: true },
        /event: message_stop\ndata: [^\n]*\n\n/,
      );
      assert.equal(claude.exchanges.at(-1)!.endedAt, null, 'the provider had not ended its response');
      await whole(read, { prompt: DEFAULT_USAGE.input_tokens, completion: DEFAULT_USAGE.output_tokens });
    });

    it('the Responses API (response.completed)', async () => {
      p.fake.respond({ endDelayMs: END_DELAY_MS });
      const read = await readThenClose(
        `${p.t.baseUrl}/api/responses`,
        auth(),
        { model: 'gpt-4o-mini', input: 'Hi.', stream: true },
        /event: response\.completed\ndata: [^\n]*\n\n/,
      );
      assert.equal(p.fake.responses.at(-1)!.endedAt, null, 'the provider had not ended its response');
      await whole(read, {
        prompt: DEFAULT_RESPONSE_USAGE.input_tokens,
        completion: DEFAULT_RESPONSE_USAGE.output_tokens,
      });
    });

    it('a chat completion replayed from the response cache ([DONE])', async () => {
      p.fake.chat();
      const body = {
        ...chatBody('gpt-4o-mini'),
        messages: [{ role: 'user', content: 'Cached.' }],
        cache_enabled: true,
      };
      const stored = await api(p.t.baseUrl, 'POST', '/api/chat/completions', { key: p.a.key, body });
      assert.equal(stored.status, 200, stored.text);
      let read: Closed;
      for (let waited = 0; ; waited += 50) {
        read = await readThenClose(`${p.t.baseUrl}/api/chat/completions`, auth(), body, /data: \[DONE\]\n\n/);
        const log = await logWhenWritten(p.t, p.a, read.logId);
        if (log.cache_hit === true) {
          assert.equal(log.status_code, 200);
          assert.equal(log.completion_tokens, DEFAULT_CHAT_USAGE.completion_tokens);
          break;
        }
        // The cache's write follows the answer.
        assert.ok(waited < 5000, 'the answer was cached');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    });
  });

  describe('closed before the last event', () => {
    const first = /piece 2\. /;

    it('a chat completion', async () => {
      p.fake.chat({ choices: [{ content: PIECES }], eventDelayMs: EVENT_DELAY_MS });
      await gone(await readThenClose(`${p.t.baseUrl}/api/chat/completions`, auth(), chatBody('gpt-4o-mini'), first));
    });

    it('a chat completion with a Claude model', async () => {
      claude.message({ content: [{ type: 'text', text: PIECES }], eventDelayMs: EVENT_DELAY_MS });
      const read = await readThenClose(
        `${p.t.baseUrl}/api/chat/completions`,
        auth(),
        chatBody('claude-sonnet-4-5'),
        first,
      );
      await gone(read);
    });

    it("Anthropic's Messages API", async () => {
      claude.message({ content: [{ type: 'text', text: PIECES }], eventDelayMs: EVENT_DELAY_MS });
      const url = `${p.t.baseUrl}/api/anthropic/v1/messages`;
      await gone(await readThenClose(url, claudeHeaders(), { ...messagesBody, stream: true }, first));
    });

    it('the Responses API', async () => {
      p.fake.respond({ text: PIECES, eventDelayMs: EVENT_DELAY_MS });
      const body = { model: 'gpt-4o-mini', input: 'Hi.', stream: true };
      await gone(await readThenClose(`${p.t.baseUrl}/api/responses`, auth(), body, first));
    });
  });
});
