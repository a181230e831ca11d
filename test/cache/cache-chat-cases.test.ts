/**
 * The response cache for chat completions, in the cases cache/response-cache.test.ts leaves out (docs/api.md
 * "Response cache"): what is never stored — a stream cut off, a stream the client abandoned, an in-band
 * error, an answer from a fallback model, a non-2xx — tool calls replayed through the client's stream
 * helper and a streamed tool call answered as JSON, and a streamed miss then hit: their X-Gatelog-Cache,
 * and the hit's log timed as the time gatelog took to answer, not the provider's.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type OpenAI from 'openai';
import { nothingStoredAfter, settledWrites, storedAfter } from '../support/cache-writes.js';
import type { ChatScript } from '../support/fake-chat-answers.js';
import { logNamedBy, logWhenWritten, type ProxyTestApp, startProxyApp } from '../support/proxy-app.js';

type Body = OpenAI.ChatCompletionCreateParamsNonStreaming & Record<string, unknown>;
type StreamBody = OpenAI.ChatCompletionCreateParamsStreaming & Record<string, unknown>;

const TOOLS: OpenAI.ChatCompletionTool[] = [
  {
    type: 'function',
    function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
  },
  {
    type: 'function',
    function: { name: 'get_time', parameters: { type: 'object', properties: { tz: { type: 'string' } } } },
  },
];
/** Two parallel tool calls, their arguments in pieces (a stream interleaves them). */
const TOOL_SCRIPT: ChatScript = {
  choices: [
    {
      toolCalls: [
        { id: 'call_weather', name: 'get_weather', arguments: ['{"ci', 'ty":"Pa', 'ris"}'] },
        { id: 'call_time', name: 'get_time', arguments: ['{"tz":', '"Europe/Paris"}'] },
      ],
    },
  ],
};
const EXPECTED_CALLS = [
  { id: 'call_weather', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
  { id: 'call_time', type: 'function', function: { name: 'get_time', arguments: '{"tz":"Europe/Paris"}' } },
];
/** A tool call as compared: what the client needs of it (the stream helper adds nothing else to keep). */
const callOf = (c: OpenAI.ChatCompletionMessageToolCall) => {
  assert.equal(c.type, 'function');
  return { id: c.id, type: c.type, function: { name: c.function.name, arguments: c.function.arguments } };
};

describe('chat completions in the response cache: the other cases', () => {
  let p: ProxyTestApp;
  let n = 0;
  /** A question no other test asks, so that each test starts from a miss. */
  const fresh = () => `Cache case ${++n} at ${Date.now()}`;
  const ask = (content: string, extra: Record<string, unknown> = {}) =>
    ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], cache_enabled: true, ...extra }) as Body;
  const streamed = (body: Body) => ({ ...body, stream: true }) as StreamBody;
  const json = async (body: Body) => {
    const { data, response } = await p.client.chat.completions.create(body).withResponse();
    return { data, cache: response.headers.get('x-gatelog-cache'), logId: response.headers.get('x-gatelog-log-id') };
  };
  /** A streamed call read to its end: its chunks, X-Gatelog-Cache and log id. */
  const stream = async (body: StreamBody) => {
    const { data, response } = await p.client.chat.completions.create(body).withResponse();
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of data) chunks.push(chunk);
    return { chunks, cache: response.headers.get('x-gatelog-cache'), logId: response.headers.get('x-gatelog-log-id') };
  };
  const textOf = (chunks: OpenAI.ChatCompletionChunk[]) =>
    chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
  /**
   * The same call again reaches the provider, and is a miss: what came before was not stored. Then it
   * is stored (the second answer is whole), which shows the key was the same.
   */
  const missesAgain = async (body: Body, asStream: boolean) => {
    const calls = p.fake.chats.length;
    const writes = await settledWrites(p.t.baseUrl);
    const again = asStream ? await stream(streamed(body)) : await json(body);
    assert.equal(again.cache, 'MISS');
    assert.equal(p.fake.chats.length, calls + 1, 'the same call reached the provider');
    await storedAfter(p.t.baseUrl, writes);
    assert.equal((await json(body)).cache, 'HIT', 'the whole answer that followed was stored');
  };

  before(async () => {
    p = await startProxyApp();
  });
  after(async () => {
    await p?.close();
  });
  beforeEach(() => {
    p.fake.chat();
    p.fake.behave({ kind: 'ok' });
  });

  describe('never stores', () => {
    it('a stream cut off after its first event', async () => {
      const body = ask(fresh());
      const writes = await settledWrites(p.t.baseUrl);
      p.fake.behave({ kind: 'stream-reset', after: 1 }, 1);
      const { data, response } = await p.client.chat.completions.create(streamed(body)).withResponse();
      assert.equal(response.headers.get('x-gatelog-cache'), 'MISS');
      await assert.rejects(async () => {
        for await (const chunk of data) void chunk;
      });
      const log = await logWhenWritten(p.t, p.a, response.headers.get('x-gatelog-log-id'));
      assert.equal(log.status_code, 502);
      await nothingStoredAfter(p.t.baseUrl, writes);
      await missesAgain(body, true);
    });

    it('a stream the client abandoned', async () => {
      const body = ask(fresh());
      p.fake.chat({ choices: [{ content: Array.from({ length: 20 }, (_, i) => `w${i} `) }], eventDelayMs: 100 });
      const writes = await settledWrites(p.t.baseUrl);
      const { data, response } = await p.client.chat.completions.create(streamed(body)).withResponse();
      assert.equal(response.headers.get('x-gatelog-cache'), 'MISS');
      for await (const chunk of data) {
        if (chunk.choices[0]?.delta.content) break; // leaving the loop aborts the request
      }
      const log = await logWhenWritten(p.t, p.a, response.headers.get('x-gatelog-log-id'));
      assert.equal(log.status_code, 499);
      await nothingStoredAfter(p.t.baseUrl, writes);
      p.fake.chat();
      await missesAgain(body, true);
    });

    it('a stream that ended on an in-band error event', async () => {
      const body = ask(fresh());
      const writes = await settledWrites(p.t.baseUrl);
      p.fake.behave({ kind: 'stream-error', after: 2 }, 1);
      const { data, response } = await p.client.chat.completions.create(streamed(body)).withResponse();
      await assert.rejects(async () => {
        for await (const chunk of data) void chunk;
      });
      const log = await logWhenWritten(p.t, p.a, response.headers.get('x-gatelog-log-id'));
      assert.equal(log.status_code, 502);
      await nothingStoredAfter(p.t.baseUrl, writes);
      await missesAgain(body, false);
    });

    for (const asStream of [false, true]) {
      it(`an answer from a fallback model (${asStream ? 'streamed' : 'JSON'})`, async () => {
        // The key is the first model's: a fallback's answer kept under it would answer for the first model.
        const body = ask(fresh(), { fallback_models: ['gpt-4o'] });
        const writes = await settledWrites(p.t.baseUrl);
        p.fake.behave({ kind: 'fail', status: 500, body: { error: { message: 'first model down' } } }, 1);
        const calls = p.fake.chats.length;
        const answered = asStream ? await stream(streamed(body)) : await json(body);
        assert.equal(answered.cache, 'MISS');
        assert.deepEqual(
          p.fake.requests.slice(-2).map((r) => (r.json as { model: string }).model),
          ['gpt-4o-mini', 'gpt-4o'],
        );
        assert.equal(p.fake.chats.length, calls + 1, 'the fallback answered (the failure is not a chat exchange)');
        const log = await logWhenWritten(p.t, p.a, answered.logId);
        assert.equal(log.fallback_used, true);
        assert.equal(log.model, 'gpt-4o');
        assert.equal(log.status_code, 200);
        await nothingStoredAfter(p.t.baseUrl, writes);
        await missesAgain(body, asStream);
      });
    }

    for (const [status, asStream] of [
      [400, false],
      [429, true],
      [404, false],
    ] as const) {
      it(`a ${status} (${asStream ? 'streamed' : 'JSON'} call)`, async () => {
        const body = ask(fresh());
        const writes = await settledWrites(p.t.baseUrl);
        p.fake.behave({ kind: 'fail', status, body: { error: { message: `refused with ${status}` } } }, 1);
        await assert.rejects(
          asStream ? stream(streamed(body)) : json(body),
          (err: { status?: number }) => err.status === status,
        );
        await nothingStoredAfter(p.t.baseUrl, writes);
        await missesAgain(body, asStream);
      });
    }
  });

  describe('tool calls', () => {
    it("stored from JSON, replayed through the client's stream helper as the provider's stream gives them", async () => {
      p.fake.chat(TOOL_SCRIPT);
      const body = ask(fresh(), { tools: TOOLS, parallel_tool_calls: true });
      const writes = await settledWrites(p.t.baseUrl);
      const original = await json(body);
      assert.equal(original.cache, 'MISS');
      const message = original.data.choices[0].message;
      assert.deepEqual(message.tool_calls?.map(callOf), EXPECTED_CALLS);
      await storedAfter(p.t.baseUrl, writes);

      const calls = p.fake.chats.length;
      const helper = p.client.chat.completions.stream(body as Parameters<OpenAI['chat']['completions']['stream']>[0]);
      const seenCalls: string[] = [];
      helper.on('tool_calls.function.arguments.done', (event) => seenCalls.push(`${event.name} ${event.arguments}`));
      const final = await helper.finalChatCompletion();
      assert.equal(p.fake.chats.length, calls, 'answered without the provider');
      assert.equal(final.choices.length, 1);
      assert.equal(final.choices[0].finish_reason, 'tool_calls');
      assert.deepEqual(final.choices[0].message.tool_calls?.map(callOf), EXPECTED_CALLS);
      assert.deepEqual(seenCalls, ['get_weather {"city":"Paris"}', 'get_time {"tz":"Europe/Paris"}']);
      assert.deepEqual(final.usage ?? null, null, 'no usage event: the call did not ask for one');

      // The helper builds the same message from the provider's own stream of the same answer.
      const live = await p.client.chat.completions
        .stream({ ...body, cache_enabled: false } as Parameters<OpenAI['chat']['completions']['stream']>[0])
        .finalChatCompletion();
      assert.equal(p.fake.chats.length, calls + 1);
      assert.deepEqual(final.choices[0].message, live.choices[0].message);
    });

    it('stored from a stream, answered as JSON', async () => {
      p.fake.chat(TOOL_SCRIPT);
      const body = ask(fresh(), { tools: TOOLS });
      const writes = await settledWrites(p.t.baseUrl);
      const live = await stream(streamed(body));
      assert.equal(live.cache, 'MISS');
      await storedAfter(p.t.baseUrl, writes);
      // What the provider answers as JSON, for the same script.
      const provider = await json({ ...body, cache_enabled: false } as Body);
      assert.equal(provider.cache, null);

      const calls = p.fake.chats.length;
      const hit = await json(body);
      assert.equal(hit.cache, 'HIT');
      assert.equal(p.fake.chats.length, calls, 'answered without the provider');
      const choice = hit.data.choices[0];
      assert.equal(choice.finish_reason, 'tool_calls');
      assert.deepEqual(choice.message.tool_calls?.map(callOf), EXPECTED_CALLS);
      assert.deepEqual(choice.message.tool_calls, provider.data.choices[0].message.tool_calls);
      assert.equal(choice.message.role, 'assistant');
      assert.equal(choice.message.content, null);
      assert.deepEqual(hit.data.usage, provider.data.usage, 'the usage gatelog asked the stream for, kept');
    });
  });

  it('a streamed miss then hit: X-Gatelog-Cache, and the hit logged at no cost, timed as its own answer', async () => {
    // A provider slow to begin: the miss takes over a second and a half; the hit must not.
    const delayMs = 1500;
    p.fake.chat({ firstEventDelayMs: delayMs });
    const body = streamed(ask(fresh(), { stream_options: { include_usage: true } }));
    const writes = await settledWrites(p.t.baseUrl);
    const miss = await stream(body);
    assert.equal(miss.cache, 'MISS');
    assert.equal(textOf(miss.chunks), 'Hello, world!');
    await storedAfter(p.t.baseUrl, writes);

    const calls = p.fake.chats.length;
    const started = performance.now();
    const hit = await stream(body);
    const took = performance.now() - started;
    assert.equal(hit.cache, 'HIT');
    assert.equal(p.fake.chats.length, calls, 'answered without the provider');
    assert.ok(took < delayMs / 2, `the hit took ${took.toFixed(0)} ms`);
    assert.equal(textOf(hit.chunks), 'Hello, world!');
    assert.deepEqual(hit.chunks.at(-1)?.usage, miss.chunks.at(-1)?.usage, 'the usage event, as the provider sent it');

    const missLog = await logNamedBy(p, miss.logId);
    const hitLog = await logNamedBy(p, hit.logId);
    assert.equal(missLog.cache_hit, false);
    assert.ok(missLog.cost > 0);
    assert.ok(missLog.latency >= delayMs / 1000, `the miss's latency ${missLog.latency}`);
    assert.equal(hitLog.cache_hit, true);
    assert.equal(hitLog.cost, 0);
    assert.equal(hitLog.status_code, 200);
    assert.equal(hitLog.stream, true);
    assert.equal(hitLog.prompt_tokens, 19);
    assert.equal(hitLog.completion_tokens, 4);
    assert.equal(hitLog.prompt_tokens, missLog.prompt_tokens);
    assert.equal(hitLog.completion_tokens, missLog.completion_tokens);
    // The time gatelog took to answer: more than nothing (it read the cache), at most what the client waited.
    assert.ok(hitLog.latency > 0, `the hit's latency ${hitLog.latency}`);
    assert.ok(hitLog.latency <= took / 1000, `the hit's latency ${hitLog.latency}, the client waited ${took} ms`);
    assert.ok(hitLog.latency < 0.5, `the hit's latency ${hitLog.latency}: the time to answer, not the provider's`);
    assert.ok(hitLog.latency < missLog.latency / 3);
  });
});
