import Anthropic from '@anthropic-ai/sdk';
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { DEFAULT_TEXT } from '../support/fake-anthropic-answers.js';
import { startFakeAnthropic, type FakeAnthropic } from '../support/fake-anthropic.js';

// The fake is what the Claude tests stand on, so check that Anthropic's own client accepts its answers.
describe('the fake Anthropic upstream speaks the Messages API', () => {
  let fake: FakeAnthropic;
  let client: Anthropic;
  before(async () => {
    fake = await startFakeAnthropic();
    client = new Anthropic({ apiKey: 'sk-ant-fake', baseURL: fake.baseUrl, maxRetries: 0 });
  });
  after(() => fake.close());
  beforeEach(() => {
    fake.behave({ kind: 'ok' });
    fake.message();
  });

  it('answers a message whole, with cache usage, and records the headers and body', async () => {
    fake.message({
      usage: { input_tokens: 12, output_tokens: 7, cache_read_input_tokens: 100, cache_creation_input_tokens: 30 },
    });
    const res = await client.messages
      .create(
        { model: 'claude-sonnet-4-6', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] },
        { headers: { 'anthropic-beta': 'prompt-caching-2024-07-31' } },
      )
      .withResponse();
    assert.equal(res.data.type, 'message');
    assert.equal(res.data.model, 'claude-sonnet-4-6');
    assert.deepEqual(res.data.content, [{ type: 'text', text: DEFAULT_TEXT.join('') }]);
    assert.equal(res.data.stop_reason, 'end_turn');
    assert.equal(res.data.usage.cache_read_input_tokens, 100);
    assert.equal(res.data.usage.cache_creation_input_tokens, 30);
    assert.match(res.response.headers.get('request-id') ?? '', /^req_/);
    const recorded = fake.requests.at(-1)!;
    assert.equal(recorded.path, '/v1/messages');
    assert.equal(recorded.apiKey, 'sk-ant-fake', "the client's key (this client sends it as a bearer token)");
    assert.match(String(recorded.headers['anthropic-version']), /^\d{4}-\d{2}-\d{2}$/);
    assert.equal(recorded.headers['anthropic-beta'], 'prompt-caching-2024-07-31');
    assert.deepEqual(recorded.json?.messages, [{ role: 'user', content: 'hi' }]);
  });

  it('streams text, thinking and parallel tool calls that the client assembles into the final message', async () => {
    fake.message({
      content: [
        { type: 'thinking', thinking: ['Two ', 'lookups.'], signature: 'sig-abc' },
        { type: 'text', text: ['Checking', '.'] },
        { type: 'tool_use', id: 'toolu_1', name: 'weather', input: ['{"city"', ': "Paris"}'] },
        { type: 'tool_use', id: 'toolu_2', name: 'clock', input: [] },
      ],
      usage: { input_tokens: 40, output_tokens: 33, cache_read_input_tokens: 8 },
    });
    const stream = client.messages.stream({
      model: 'claude-opus-4-7',
      max_tokens: 2048,
      messages: [{ role: 'user', content: 'weather and time' }],
    });
    const kinds: string[] = [];
    stream.on('streamEvent', (event) => kinds.push(event.type));
    const message = await stream.finalMessage();
    assert.equal(message.stop_reason, 'tool_use');
    assert.deepEqual(message.content, [
      { type: 'thinking', thinking: 'Two lookups.', signature: 'sig-abc' },
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'toolu_2', name: 'clock', input: {} },
    ]);
    assert.equal(message.usage.input_tokens, 40);
    assert.equal(message.usage.output_tokens, 33, 'the final count from message_delta');
    assert.equal(message.usage.cache_read_input_tokens, 8);
    assert.equal(kinds[0], 'message_start');
    assert.equal(kinds.at(-1), 'message_stop');
    const exchange = fake.exchanges.at(-1)!;
    assert.ok(exchange.stream);
    assert.ok(
      exchange.sent.some((e) => e.event === 'ping'),
      'a ping is sent (and the client skips it)',
    );
    assert.deepEqual(
      exchange.sent.filter((e) => e.event === 'content_block_delta').map((e) => JSON.parse(e.data).delta.type),
      [
        'thinking_delta',
        'thinking_delta',
        'signature_delta',
        'text_delta',
        'text_delta',
        'input_json_delta',
        'input_json_delta',
      ],
    );
  });

  it('answers errors in Anthropic shape, and refuses what Anthropic refuses', async () => {
    fake.behave({ kind: 'error', status: 529, type: 'overloaded_error', message: 'Overloaded' }, 1);
    await assert.rejects(
      client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] }),
      (err: unknown) => err instanceof Anthropic.APIError && err.status === 529 && /Overloaded/.test(err.message),
    );
    const ok = await client.messages.create({
      model: 'claude-haiku-4-5',
      max_tokens: 8,
      messages: [{ role: 'user', content: 'x' }],
    });
    assert.equal(ok.stop_reason, 'end_turn', 'then it recovers');

    const raw = async (headers: Record<string, string>, body: unknown) => {
      const res = await fetch(`${fake.baseUrl}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      return {
        status: res.status,
        body: (await res.json()) as { type: string; error: { type: string; message: string } },
      };
    };
    const good = { model: 'claude-haiku-4-5', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] };
    const keyed = { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' };
    assert.equal((await raw({ 'anthropic-version': '2023-06-01' }, good)).status, 401);
    assert.equal((await raw({ 'x-api-key': 'k' }, good)).status, 400);
    const extra = await raw(keyed, { ...good, n: 1 });
    assert.deepEqual([extra.status, extra.body.type, extra.body.error.type], [400, 'error', 'invalid_request_error']);
    assert.match(extra.body.error.message, /^n: Extra inputs/);
    const system = await raw(keyed, { ...good, messages: [{ role: 'system', content: 'x' }] });
    assert.match(system.body.error.message, /messages\.0\.role/);
    const empty = await raw(keyed, { ...good, messages: [{ role: 'user', content: [{ type: 'text', text: '' }] }] });
    assert.match(empty.body.error.message, /non-empty/);
    assert.equal((await raw(keyed, { ...good, max_tokens: undefined })).status, 400);
  });

  it('sends an in-band error event, cuts a stream, or resets it, when told to', async () => {
    const ask = () =>
      client.messages
        .stream({ model: 'claude-haiku-4-5', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] })
        .finalMessage();
    fake.behave({ kind: 'stream-error', after: 3, type: 'overloaded_error', message: 'Overloaded' }, 1);
    await assert.rejects(ask(), (err: unknown) => err instanceof Anthropic.APIError && /Overloaded/.test(err.message));
    const inBand = fake.exchanges.at(-1)!.sent;
    assert.deepEqual(
      inBand.map((e) => e.event),
      ['message_start', 'ping', 'content_block_start', 'error'],
    );
    assert.deepEqual(JSON.parse(inBand.at(-1)!.data), {
      type: 'error',
      error: { type: 'overloaded_error', message: 'Overloaded' },
    });

    fake.behave({ kind: 'stream-cut', after: 5 }, 1);
    await assert.rejects(ask(), 'a stream that ends before message_stop is no message');
    assert.equal(fake.exchanges.at(-1)!.sent.length, 5);
    assert.ok(fake.exchanges.at(-1)!.endedAt !== null);

    fake.behave({ kind: 'stream-reset', after: 4 }, 1);
    await assert.rejects(ask());
    assert.equal(fake.exchanges.at(-1)!.endedAt, null);
    assert.equal((await ask()).content.length, 1, 'then it recovers');
  });
});
