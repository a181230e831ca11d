import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import OpenAI from 'openai';
import { DEFAULT_RESPONSE_TEXT, THREE_ITEM_INPUT } from '../support/fake-responses.js';
import { DEFAULT_CHAT_CONTENT } from '../support/fake-chat-answers.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { dataOf, sseEventsOf } from '../support/sse.js';

/** Hooks a describe block to a fake upstream, set back to plain answers before each test, and the official client pointed at it. */
function useFakeAndClient(started: (app: { fake: FakeUpstream; client: OpenAI }) => void): void {
  let fake: FakeUpstream;
  before(async () => {
    fake = await startFakeUpstream();
    started({ fake, client: new OpenAI({ apiKey: 'sk-fake', baseURL: fake.baseUrl, maxRetries: 0 }) });
  });
  after(() => fake.close());
  beforeEach(() => {
    fake.behave({ kind: 'ok' });
    fake.chat();
    fake.respond();
  });
}

// The fake is what the proxy tests stand on, so check that the official client accepts its answers.
describe('the fake upstream speaks the OpenAI API', () => {
  let fake: FakeUpstream;
  let client: OpenAI;
  useFakeAndClient((started) => ({ fake, client } = started));

  it('answers embeddings in float and base64, and records the request', async () => {
    const floats = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: ['a', 'b'],
      encoding_format: 'float',
    });
    assert.equal(floats.data.length, 2);
    assert.equal(floats.data[0].embedding.length, 1536);
    const decoded = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'a', dimensions: 8 });
    assert.equal(decoded.data[0].embedding.length, 8);
    const last = fake.requests.at(-1)!;
    assert.equal(last.path, '/v1/embeddings');
    assert.equal(last.headers.authorization, 'Bearer sk-fake');
    assert.equal((last.json as { encoding_format: string }).encoding_format, 'base64');
  });

  it('fails, then recovers, when told to', async () => {
    fake.behave(
      {
        kind: 'fail',
        status: 429,
        body: { error: { message: 'slow down', type: 'rate_limit', param: null, code: null } },
      },
      1,
    );
    await assert.rejects(client.embeddings.create({ model: 'text-embedding-3-small', input: 'a' }), (err: unknown) => {
      return err instanceof OpenAI.APIError && err.status === 429;
    });
    const ok = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'a' });
    assert.equal(ok.data.length, 1);
  });

  it('answers a chat completion whole, echoing the model, with detailed usage', async () => {
    fake.chat({ usage: { prompt_tokens: 30, completion_tokens: 5, cached_tokens: 10, reasoning_tokens: 2 } });
    const res = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    assert.equal(res.data.object, 'chat.completion');
    assert.equal(res.data.model, 'gpt-4o-mini');
    assert.equal(res.data.choices[0].message.content, DEFAULT_CHAT_CONTENT.join(''));
    assert.equal(res.data.choices[0].finish_reason, 'stop');
    assert.equal(res.data.usage?.prompt_tokens_details?.cached_tokens, 10);
    assert.equal(res.data.usage?.completion_tokens_details?.reasoning_tokens, 2);
    assert.equal(res.data.usage?.total_tokens, 35);
    assert.match(res.response.headers.get('x-request-id') ?? '', /^req_/);
    assert.equal(fake.chats.at(-1)!.stream, false);
    assert.deepEqual((fake.chats.at(-1)!.request.json as { messages: unknown }).messages, [
      { role: 'user', content: 'hi' },
    ]);
  });

  it('streams chunks the client assembles: content, parallel tool calls interleaved by index, n choices', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), DEFAULT_CHAT_CONTENT.join(''));
    assert.equal(chunks.at(-2)!.choices[0].finish_reason, 'stop');
    assert.deepEqual(chunks.at(-1)!.choices, [], 'the usage-only event comes last');
    assert.equal(chunks.at(-1)!.usage?.prompt_tokens, 19);
    const exchange = fake.chats.at(-1)!;
    assert.equal(exchange.sent.at(-1)!.data, '[DONE]');
    assert.ok(exchange.endedAt !== null && exchange.closedEarlyAt === null);

    // Without include_usage there is no usage-only event.
    const plain = await client.chat.completions.create({ model: 'gpt-4o', messages: [], stream: true });
    const plainChunks = [];
    for await (const chunk of plain) plainChunks.push(chunk);
    assert.ok(plainChunks.every((c) => c.choices.length === 1 && c.usage === undefined));

    fake.chat({
      choices: [
        {
          toolCalls: [
            { id: 'call_a', name: 'weather', arguments: ['{"city"', ':"Paris', '"}'] },
            { id: 'call_b', name: 'time', arguments: ['{"tz":', '"CET"}'] },
          ],
        },
      ],
    });
    const tools = await client.chat.completions
      .stream({ model: 'gpt-4o', messages: [{ role: 'user', content: 'both' }] })
      .finalChatCompletion();
    assert.deepEqual(
      tools.choices[0].message.tool_calls?.map((c) => c.type === 'function' && [c.id, c.function.arguments]),
      [
        ['call_a', '{"city":"Paris"}'],
        ['call_b', '{"tz":"CET"}'],
      ],
    );
    assert.equal(tools.choices[0].finish_reason, 'tool_calls');
    const indexes = fake.chats
      .at(-1)!
      .sent.slice(1, -2)
      .map((e) => (JSON.parse(e.data) as { choices: { delta: { tool_calls: { index: number }[] } }[] }).choices[0])
      .map((c) => c.delta.tool_calls[0].index);
    assert.deepEqual(indexes, [0, 1, 0, 1, 0, 1, 0], 'the calls are interleaved');

    fake.chat({ choices: [{ content: ['a', 'b'] }, { content: ['c', 'd'] }] });
    const two = await client.chat.completions
      .stream({ model: 'gpt-4o', messages: [{ role: 'user', content: 'two' }], n: 2 })
      .finalChatCompletion();
    assert.deepEqual(
      two.choices.map((c) => c.message.content),
      ['ab', 'cd'],
    );
  });

  it('breaks a stream when told to, and notes when its client went away', async () => {
    const raw = (body: Record<string, unknown>) =>
      fetch(`${fake.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o', messages: [], stream: true, ...body }),
      });
    fake.behave({ kind: 'stream-malformed', after: 2 }, 1);
    const malformed = await (await raw({})).text();
    assert.match(malformed, /^(data: \{.*\}\n\n){2}data: \{not json\n\n/);
    assert.ok(malformed.endsWith('data: [DONE]\n\n'));

    fake.behave({ kind: 'stream-error', after: 1, message: 'boom' }, 1);
    const inBand = await (await raw({})).text();
    assert.ok(inBand.endsWith('data: {"error":{"message":"boom","type":"server_error","param":null,"code":null}}\n\n'));

    fake.behave({ kind: 'stream-reset', after: 2 }, 1);
    const reset = (await raw({})).body!.getReader();
    let received = '';
    await assert.rejects(async () => {
      for (;;) {
        const { value, done } = await reset.read();
        if (done) return;
        received += Buffer.from(value).toString();
      }
    }, 'the stream breaks instead of ending');
    assert.equal(fake.chats.at(-1)!.sent.length, 2);
    assert.match(received, /^(data: \{.*\}\n\n){2}$/, 'both events arrived before the reset');

    fake.behave({ kind: 'stream-silent', after: 1 }, 1);
    const controller = new AbortController();
    const silent = await fetch(`${fake.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', messages: [], stream: true }),
      signal: controller.signal,
    });
    const reader = silent.body!.getReader();
    await reader.read();
    controller.abort();
    const exchange = fake.chats.at(-1)!;
    for (let i = 0; i < 50 && exchange.closedEarlyAt === null; i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(exchange.closedEarlyAt !== null, 'the fake saw its client go');
    assert.equal(exchange.endedAt, null);

    // Delays: the first event waits, then each next one.
    fake.chat({ firstEventDelayMs: 150, eventDelayMs: 40 });
    await (await raw({})).text();
    const sent = fake.chats.at(-1)!.sent;
    assert.ok(sent[1].at - sent[0].at >= 35 && sent[2].at - sent[1].at >= 35);
  });
});

// The Responses API as the official client reads it: the fake's events must build the same response.
describe('the fake upstream speaks the Responses API', () => {
  let fake: FakeUpstream;
  let client: OpenAI;
  useFakeAndClient((started) => ({ fake, client } = started));

  it('answers a response whole and streamed, the same response both ways', async () => {
    fake.respond({ usage: { input_tokens: 30, output_tokens: 5, cached_tokens: 10, reasoning_tokens: 2 } });
    const whole = await client.responses.create({ model: 'gpt-4o-mini', input: 'hi', instructions: 'Be brief.' });
    assert.equal(whole.object, 'response');
    assert.equal(whole.status, 'completed');
    assert.equal(whole.model, 'gpt-4o-mini');
    assert.equal(whole.output_text, DEFAULT_RESPONSE_TEXT.join(''));
    assert.equal(whole.instructions, 'Be brief.');
    assert.deepEqual(whole.usage, {
      input_tokens: 30,
      input_tokens_details: { cached_tokens: 10 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 2 },
      total_tokens: 35,
    });
    assert.equal(fake.requests.at(-1)!.path, '/v1/responses');

    const types: string[] = [];
    const deltas: string[] = [];
    const stream = client.responses
      .stream({ model: 'gpt-4o-mini', input: 'hi' })
      .on('event', (event) => types.push(event.type))
      .on('response.output_text.delta', (event) => deltas.push(event.delta));
    const final = await stream.finalResponse();
    assert.equal(final.output_text, DEFAULT_RESPONSE_TEXT.join(''));
    assert.deepEqual(deltas, DEFAULT_RESPONSE_TEXT);
    assert.equal(types[0], 'response.created');
    assert.equal(types.at(-1), 'response.completed');
    const sent = fake.responses.at(-1)!.sent;
    assert.deepEqual(
      sent.map((e) => e.event),
      types,
    );
    assert.deepEqual(
      sent.map((e) => JSON.parse(e.data).sequence_number),
      types.map((_, i) => i),
    );
  });

  it('streams function calls and a refusal, and an incomplete response', async () => {
    fake.respond({
      functionCalls: [
        { callId: 'call_a', name: 'get_weather', arguments: ['{"city"', ':"Paris"}'] },
        { callId: 'call_b', name: 'get_time', arguments: ['{}'] },
      ],
    });
    const calls = await client.responses.stream({ model: 'gpt-4o', input: 'weather?' }).finalResponse();
    assert.deepEqual(
      calls.output.map((item) => item.type === 'function_call' && [item.call_id, item.name, item.arguments]),
      [
        ['call_a', 'get_weather', '{"city":"Paris"}'],
        ['call_b', 'get_time', '{}'],
      ],
    );
    fake.respond({ refusal: ['No', ', sorry.'] });
    const refused = await client.responses.stream({ model: 'gpt-4o', input: 'x' }).finalResponse();
    const message = refused.output[0];
    assert.ok(message.type === 'message' && message.content[0].type === 'refusal');
    assert.equal(message.content[0].refusal, 'No, sorry.');
    fake.respond({ status: 'incomplete' });
    const incomplete = await client.responses.stream({ model: 'gpt-4o', input: 'x' }).finalResponse();
    assert.equal(incomplete.status, 'incomplete');
    assert.equal(fake.responses.at(-1)!.sent.at(-1)!.event, 'response.incomplete');
  });

  it('keeps a response: retrieve (whole and streamed), input items page by page, cancel, delete', async () => {
    const created = await client.responses.create({
      model: 'gpt-4o-mini',
      input: THREE_ITEM_INPUT,
    });
    assert.deepEqual(await client.responses.retrieve(created.id), created);
    const replayed = await client.responses.stream({ response_id: created.id }).finalResponse();
    assert.equal(replayed.output_text, created.output_text);
    const texts: string[] = [];
    for await (const item of client.responses.inputItems.list(created.id, { limit: 2, order: 'asc' })) {
      assert.ok(item.type === 'message');
      texts.push((item.content[0] as { text: string }).text);
    }
    assert.deepEqual(texts, ['one', 'two', 'three']);
    await assert.rejects(client.responses.cancel(created.id), (err: unknown) => err instanceof OpenAI.BadRequestError);
    const background = await client.responses.create({ model: 'gpt-4o-mini', input: 'x', background: true });
    assert.equal((await client.responses.cancel(background.id)).status, 'cancelled');
    await client.responses.delete(created.id);
    assert.equal(fake.requests.at(-1)!.method, 'DELETE');
    await assert.rejects(client.responses.retrieve(created.id), (err: unknown) => err instanceof OpenAI.NotFoundError);
  });

  it('breaks a response stream when told to', async () => {
    const raw = () =>
      fetch(`${fake.baseUrl}/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o', input: 'x', stream: true }),
      });
    fake.behave({ kind: 'stream-error', after: 3, message: 'boom' }, 1);
    const inBand = await (await raw()).text();
    assert.match(inBand, /event: error\ndata: \{"type":"error","code":"server_error","message":"boom",[^\n]*\n\n$/);
    fake.behave({ kind: 'stream-failed', after: 3, message: 'failed here' }, 1);
    const failed = sseEventsOf(await (await raw()).text());
    const last = failed.at(-1)!;
    assert.ok(last.raw.startsWith('event: response.failed\n'), last.raw);
    const event = dataOf(last);
    assert.equal(event.response.status, 'failed');
    assert.equal(event.response.error.message, 'failed here');
    fake.behave({ kind: 'stream-end', after: 3 }, 1);
    const ended = await (await raw()).text();
    assert.equal(sseEventsOf(ended).length, 3);
    fake.behave({ kind: 'stream-malformed', after: 2 }, 1);
    const malformed = await (await raw()).text();
    assert.match(
      malformed,
      /^(event: [a-z._]+\ndata: \{.*\}\n\n){2}event: response.output_text.delta\ndata: \{not json\n\n/,
    );
  });
});
