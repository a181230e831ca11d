/**
 * Chat completions with a Claude model (docs/api.md "Chat completions" → Claude): the official openai
 * client, gatelog translating to Anthropic's Messages API and back, a fake Anthropic upstream. The
 * answer and the stream in OpenAI's shape (text, tool calls by index, finish reasons, usage with cached
 * tokens), Anthropic's errors in OpenAI's shape, untranslatable fields refused naming them, the log
 * priced with cache reads and writes, and the response cache serving a Claude answer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import type { FakeAnthropic } from '../support/fake-anthropic.js';
import { cacheWrites, storedAfter } from '../support/cache-writes.js';
import { api, closeInOrder } from '../support/harness.js';
import { logNamedBy, logWhenWritten, type ProxyTestApp, startClaudeProxyApp } from '../support/proxy-app.js';

describe('chat completions served by Claude', () => {
  let p: ProxyTestApp;
  let claude: FakeAnthropic;
  const model = 'claude-sonnet-4-5';
  const hello = [{ role: 'user' as const, content: 'Hello' }];

  before(async () => ({ p, claude } = await startClaudeProxyApp()));
  after(() => closeInOrder(p, claude));

  it('answers a chat completion from a Claude message, logged and priced with cache reads and writes', async () => {
    claude.message({
      content: [{ type: 'text', text: ['Bonjour', ' !'] }],
      usage: { input_tokens: 100, output_tokens: 7, cache_read_input_tokens: 1000, cache_creation_input_tokens: 200 },
    });
    const { data, response } = await p.client.chat.completions
      .create({ model, messages: [{ role: 'system', content: 'Be brief.' }, ...hello], max_tokens: 50 })
      .withResponse();
    assert.equal(data.object, 'chat.completion');
    assert.equal(data.choices[0].message.content, 'Bonjour !');
    assert.equal(data.choices[0].finish_reason, 'stop');
    assert.equal(data.usage?.prompt_tokens, 1300);
    assert.equal(data.usage?.completion_tokens, 7);
    assert.equal(data.usage?.prompt_tokens_details?.cached_tokens, 1000);
    const sent = claude.requests.at(-1)!;
    assert.equal(sent.path, '/v1/messages');
    assert.equal(sent.apiKey, 'sk-ant-test-key-0001');
    assert.ok(sent.headers['anthropic-version']);
    assert.equal(sent.json?.max_tokens, 50);
    assert.deepEqual(sent.json?.system, [{ type: 'text', text: 'Be brief.' }]);
    const log = await logNamedBy(p, response.headers.get('x-gatelog-log-id'));
    assert.equal(log.provider_id, 'anthropic');
    assert.equal(log.prompt_tokens, 1300);
    assert.equal(log.completion_tokens, 7);
    // Sonnet 4.5: $3 in, $15 out, $0.30 cache read, $3.75 cache write per million tokens.
    const expected = (100 * 3 + 1000 * 0.3 + 200 * 3.75 + 7 * 15) / 1e6;
    assert.ok(Math.abs(log.cost - expected) < 1e-9, `cost ${log.cost} vs ${expected}`);
  });

  it('streams tool calls by index with whole arguments, the finish reason and the usage asked for', async () => {
    claude.message({
      content: [
        { type: 'text', text: ['Let me look.'] },
        { type: 'tool_use', id: 'toolu_1', name: 'weather', input: ['{"city":', ' "Paris"}'] },
        { type: 'tool_use', id: 'toolu_2', name: 'time', input: [] },
      ],
    });
    const stream = p.client.chat.completions.stream({
      model,
      messages: hello,
      tools: [
        { type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: {} } } },
        { type: 'function', function: { name: 'time', parameters: { type: 'object', properties: {} } } },
      ],
      stream_options: { include_usage: true },
    });
    const done = await stream.finalChatCompletion();
    const message = done.choices[0].message;
    assert.equal(message.content, 'Let me look.');
    assert.deepEqual(
      message.tool_calls?.map((c) => (c.type === 'function' ? [c.id, c.function.name, c.function.arguments] : null)),
      [
        ['toolu_1', 'weather', '{"city": "Paris"}'],
        ['toolu_2', 'time', '{}'],
      ],
    );
    assert.equal(done.choices[0].finish_reason, 'tool_calls');
    assert.ok(done.usage && done.usage.completion_tokens > 0);
  });

  it("passes Anthropic's errors on in OpenAI's shape, and refuses what cannot be translated", async () => {
    claude.behave({ kind: 'error', status: 529, type: 'overloaded_error', message: 'Overloaded' }, 1);
    await assert.rejects(
      p.client.chat.completions.create({ model, messages: hello }),
      (err: { status: number; message: string; code: string }) =>
        err.status === 529 && /Overloaded/.test(err.message) && err.code === 'overloaded_error',
    );
    const refused = await api(p.t.baseUrl, 'POST', '/api/chat/completions', {
      key: p.a.key,
      body: { model, messages: hello, logit_bias: { '50256': -100 } },
    });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.param, 'logit_bias');
  });

  it('fails the log of a stream Anthropic breaks with an in-band error, without [DONE]', async () => {
    claude.behave({ kind: 'stream-error', after: 3, type: 'overloaded_error', message: 'Overloaded' }, 1);
    const stream = await p.client.chat.completions.create({ model, messages: hello, stream: true }).withResponse();
    await assert.rejects(async () => {
      for await (const chunk of stream.data) void chunk;
    }, /Overloaded/);
    const log = await logWhenWritten(p.t, p.a, stream.response.headers.get('x-gatelog-log-id'));
    assert.equal(log.status_code, 502);
    assert.match(log.error_message, /Overloaded/);
  });

  it('serves a Claude answer again from the response cache', async () => {
    claude.message();
    const body = {
      model,
      messages: [{ role: 'user' as const, content: `cache me ${Date.now()}` }],
      cache_enabled: true,
    };
    const writes = await cacheWrites(p.t.baseUrl);
    await p.client.chat.completions.create(body as OpenAI.ChatCompletionCreateParamsNonStreaming);
    // The answer is stored off its path: waited for (a fixed pause missed it on a busy machine).
    await storedAfter(p.t.baseUrl, writes);
    const seen = claude.requests.length;
    const again = await p.client.chat.completions
      .create(body as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .withResponse();
    assert.equal(again.response.headers.get('x-gatelog-cache'), 'HIT');
    assert.equal(again.data.choices[0].message.content, 'Hello, world!');
    assert.equal(claude.requests.length, seen);
  });
});
