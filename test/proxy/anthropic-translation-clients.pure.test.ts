/**
 * The translation between the two official clients over real HTTP: the OpenAI client's calls
 * answered by a fake Anthropic through a small bridge that translates there and back.
 */
import { createParser } from 'eventsource-parser';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import OpenAI from 'openai';
import { AppError } from '../../src/errors.js';
import { chatToMessages } from '../../src/providers/anthropic/chat-to-messages.js';
import { chatErrorOf } from '../../src/providers/anthropic/errors-to-chat.js';
import { messageToChat } from '../../src/providers/anthropic/messages-to-chat.js';
import { AnthropicStreamTranslator } from '../../src/providers/anthropic/stream-to-chunks.js';
import type { TranslatedEvent } from '../../src/providers/chat-translation.js';
import { type FakeAnthropic, startFakeAnthropic } from '../support/fake-anthropic.js';
import { toolCallTurn } from '../support/chat-messages.js';

type Json = Record<string, unknown>;

const MODEL = 'claude-sonnet-4-6';

/**
 * The translation between the two official clients, over real HTTP: a small bridge takes the OpenAI
 * client's chat call, sends its translation to the fake Anthropic, and answers with the translated
 * answer (JSON or events). The OpenAI client must read every answer as one of OpenAI's own.
 */
describe('the OpenAI client talks to Claude through the translation', () => {
  let fake: FakeAnthropic;
  let bridge: http.Server;
  let client: OpenAI;
  before(async () => {
    fake = await startFakeAnthropic();
    bridge = http.createServer((req, res) => void relay(req, res, fake.baseUrl));
    await new Promise<void>((resolve) => bridge.listen(0, '127.0.0.1', resolve));
    const { port } = bridge.address() as AddressInfo;
    client = new OpenAI({ apiKey: 'unused', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
  });
  after(async () => {
    bridge.closeAllConnections();
    await new Promise((resolve) => bridge.close(resolve));
    await fake.close();
  });
  beforeEach(() => {
    fake.behave({ kind: 'ok' });
    fake.message();
  });

  const tools: OpenAI.Chat.ChatCompletionTool[] = [
    {
      type: 'function',
      function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
    },
    { type: 'function', function: { name: 'clock' } },
  ];
  const history: OpenAI.Chat.ChatCompletionMessageParam[] = [
    { role: 'system', content: 'Be brief.' },
    { role: 'developer', content: 'Use tools.' },
    { role: 'user', content: 'Weather in Paris?' },
    toolCallTurn('toolu_0', 'weather', '{"city":"Paris"}'),
    { role: 'tool', tool_call_id: 'toolu_0', content: 'sunny' },
    { role: 'user', content: 'And the time?' },
  ];

  it('answers a call whole: the request Anthropic accepts, the completion the client reads', async () => {
    fake.message({
      content: [{ type: 'text', text: ['Sunny', ', noon.'] }],
      usage: { input_tokens: 30, output_tokens: 5, cache_read_input_tokens: 100 },
    });
    const completion = await client.chat.completions.create({ model: MODEL, messages: history, tools });
    assert.equal(completion.choices[0].message.content, 'Sunny, noon.');
    assert.equal(completion.choices[0].finish_reason, 'stop');
    assert.equal(completion.model, MODEL);
    assert.equal(completion.usage?.prompt_tokens, 130);
    assert.equal(completion.usage?.prompt_tokens_details?.cached_tokens, 100);
    const sent = fake.requests.at(-1)!;
    assert.equal(sent.apiKey, 'sk-ant-bridge');
    assert.equal(sent.headers['anthropic-version'], '2023-06-01');
    assert.deepEqual(
      (sent.json!.messages as Json[]).map((m) => m.role),
      ['user', 'assistant', 'user'],
    );
    assert.equal((sent.json!.system as Json[]).length, 2);
  });

  it('streams parallel tool calls the client assembles, with the usage event only when asked for', async () => {
    fake.message({
      content: [
        { type: 'text', text: ['Checking.'] },
        { type: 'tool_use', id: 'toolu_1', name: 'weather', input: ['{"city":', '"Oslo"}'] },
        { type: 'tool_use', id: 'toolu_2', name: 'clock', input: [] },
      ],
      usage: { input_tokens: 40, output_tokens: 20, cache_creation_input_tokens: 8 },
    });
    const final = await client.chat.completions
      .stream({ model: MODEL, messages: history, tools, stream_options: { include_usage: true } })
      .finalChatCompletion();
    const message = final.choices[0].message;
    assert.equal(message.content, 'Checking.');
    assert.deepEqual(
      message.tool_calls?.map((c) => c.type === 'function' && [c.id, c.function.name, c.function.arguments]),
      [
        ['toolu_1', 'weather', '{"city":"Oslo"}'],
        ['toolu_2', 'clock', '{}'],
      ],
    );
    assert.equal(final.choices[0].finish_reason, 'tool_calls');
    assert.equal(final.usage?.prompt_tokens, 48);
    assert.equal(final.usage?.completion_tokens, 20);

    const plain = await client.chat.completions.create({ model: MODEL, messages: history, stream: true });
    const seen = [];
    for await (const chunk of plain) seen.push(chunk);
    assert.ok(seen.length > 0 && seen.every((c) => c.choices.length === 1 && c.usage === undefined));
  });

  it("passes Anthropic's errors to the client in OpenAI's shape, before and during a stream", async () => {
    fake.behave({ kind: 'error', status: 529, type: 'overloaded_error', message: 'Overloaded' }, 1);
    await assert.rejects(
      client.chat.completions.create({ model: MODEL, messages: history }),
      (err: unknown) => err instanceof OpenAI.APIError && err.status === 529 && err.type === 'overloaded_error',
    );
    fake.behave({ kind: 'stream-error', after: 4, type: 'overloaded_error', message: 'Overloaded' }, 1);
    const stream = await client.chat.completions.create({ model: MODEL, messages: history, stream: true });
    await assert.rejects(async () => {
      for await (const chunk of stream) void chunk;
    }, /Overloaded/);
    await assert.rejects(
      client.chat.completions.create({ model: MODEL, messages: history, n: 3 }),
      (err: unknown) => err instanceof OpenAI.APIError && err.status === 400 && err.param === 'n',
    );
  });
});

/** The bridge: one chat call, translated there and back (what the chat route will do, reduced). */
async function relay(req: http.IncomingMessage, res: http.ServerResponse, anthropicBaseUrl: string) {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  const fields = JSON.parse(Buffer.concat(parts).toString('utf8')) as Json;
  let body: Json;
  try {
    body = chatToMessages(fields, String(fields.model));
  } catch (err) {
    const error = err as AppError;
    res.writeHead(error.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(error.toEnvelope()));
    return;
  }
  const upstream = await fetch(`${anthropicBaseUrl}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-bridge', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  });
  if (!upstream.ok) {
    res.writeHead(upstream.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(chatErrorOf(await upstream.text(), upstream.status)));
    return;
  }
  if (fields.stream !== true) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(messageToChat(await upstream.json()).completion));
    return;
  }
  const options = fields.stream_options as Json | undefined;
  const translator = new AnthropicStreamTranslator({ includeUsage: options?.include_usage === true });
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
  const write = (events: TranslatedEvent[]) => {
    for (const event of events) if (!event.hidden) res.write(event.text);
  };
  const parser = createParser({ onEvent: (message) => write(translator.event(message)) });
  const decoder = new TextDecoder();
  for await (const piece of upstream.body!) parser.feed(decoder.decode(piece as Uint8Array, { stream: true }));
  write(translator.end());
  res.end();
}
