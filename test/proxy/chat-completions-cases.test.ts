/**
 * POST /api/chat/completions, the cases the official client meets: n > 1 (plain and streamed, with
 * parallel tool calls per choice) and request_breakdown through the client. The ways a stream ends:
 * chat-completions-stream-ends.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import { DEFAULT_CHAT_CONTENT } from '../support/fake-chat-answers.js';
import { BREAKDOWN_FIELDS, client, fake, logOf, near, noting, useProxyApp } from '../support/proxied-route.js';

const HELLO = DEFAULT_CHAT_CONTENT.join('');
const MESSAGES = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Name two fruits.' },
] as const;
/** gpt-4o-mini per million tokens, from the price catalog (OpenAI's public prices). */
const PRICE = { input: 0.15, output: 0.6 };
/** Short, so that the silent upstream's case ends soon; long enough that a busy machine is not silent. */
const IDLE_MS = 1500;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- logs and events are read as the JSON they are
type Loose = any;

interface ToolCall {
  id: string;
  type: string;
  function: { name: string; arguments: string };
}
/** A tool call without what a client or the log may add beside it. */
const shape = (calls: ToolCall[] | undefined) =>
  (calls ?? []).map(({ id, type, function: { name, arguments: args } }) => ({
    id,
    type,
    function: { name, arguments: args },
  }));

describe('POST /api/chat/completions: n, request_breakdown and the official client', () => {
  const lastSent = () => fake.chats.at(-1)!;

  useProxyApp({ GATELOG_UPSTREAM_TIMEOUT_MS: '10000', GATELOG_STREAM_IDLE_TIMEOUT_MS: String(IDLE_MS) });

  const TWO_CHOICES = {
    choices: [{ content: ['Red', ' apple', '.'] }, { content: ['Green', ' pear'], finishReason: 'length' }],
  };
  const EXPECTED_CHOICES = [
    [0, 'Red apple.', 'stop'],
    [1, 'Green pear', 'length'],
  ];
  const choiceSummary = (choices: Loose[]) =>
    choices.map((c) => [c.index, c.message.content, c.finish_reason] as [number, string, string]);

  it('n: 2 not streamed: the client gets both choices, and the log keeps both', async () => {
    fake.chat(TWO_CHOICES);
    const res = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [...MESSAGES], n: 2 })
      .withResponse();
    assert.equal(res.response.status, 200);
    assert.equal((lastSent().request.json as { n?: unknown }).n, 2, 'n went upstream');
    assert.deepEqual(choiceSummary(res.data.choices), EXPECTED_CHOICES);
    assert.deepEqual(res.data, JSON.parse(lastSent().sent[0].data), 'the answer is what the upstream sent');

    const log = await logOf(res.response.headers.get('x-gatelog-log-id'));
    assert.equal(log.status_code, 200);
    assert.equal(log.stream, false);
    assert.deepEqual(choiceSummary(JSON.parse(log.output).choices), EXPECTED_CHOICES);
    assert.equal(log.completion_message.content, 'Red apple.', 'choice 0 is the completion message');
  });

  it('n: 2 streamed: the client assembles both choices from interleaved chunks, and the log keeps both', async () => {
    fake.chat(TWO_CHOICES);
    const stream = noting.client.chat.completions.stream({ model: 'gpt-4o-mini', messages: [...MESSAGES], n: 2 });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    stream.on('chunk', (chunk) => chunks.push(chunk));
    const final = await stream.finalChatCompletion();
    assert.deepEqual(choiceSummary(final.choices), EXPECTED_CHOICES);
    const indexes = chunks.flatMap((c) => c.choices.map((choice) => choice.index));
    assert.deepEqual(indexes.slice(0, 4), [0, 1, 0, 1], 'the choices arrived interleaved');
    const finishes = chunks.flatMap((c) =>
      c.choices.filter((choice) => choice.finish_reason !== null).map((choice) => [choice.index, choice.finish_reason]),
    );
    assert.deepEqual(finishes, [
      [1, 'length'],
      [0, 'stop'],
    ]);
    assert.ok(
      chunks.every((c) => !c.usage),
      'the usage event gatelog asked for is not passed on',
    );

    const log = await logOf(noting.logId);
    assert.equal(log.status_code, 200);
    assert.equal(log.stream, true);
    const output = JSON.parse(log.output);
    assert.deepEqual(choiceSummary(output.choices), EXPECTED_CHOICES);
    assert.equal(output.usage.completion_tokens, 4, "the upstream's usage, kept");
    assert.equal(log.completion_message.content, 'Red apple.', 'choice 0 is the completion message');
  });

  it('n: 2 streamed with parallel tool calls in each choice: each choice assembled by tool-call index', async () => {
    const calls = {
      weather: { id: 'call_w', name: 'get_weather', arguments: ['{"ci', 'ty":"Pa', 'ris"}'] },
      time: { id: 'call_t', name: 'get_time', arguments: ['{"tz":', '"Europe/Paris"}'] },
      rome: { id: 'call_r', name: 'get_weather', arguments: ['{"city"', ':"Ro', 'me"}'] },
      news: { id: 'call_n', name: 'get_news', arguments: ['{"topic":"', 'sport', 's"}'] },
      oslo: { id: 'call_o', name: 'get_time', arguments: ['{"tz":"Europe/Oslo"}'] },
    };
    // Choice 1 has three calls: their indexes (0, 1, 2) repeat choice 0's, so only the pair (choice,
    // index) tells them apart.
    fake.chat({
      choices: [{ toolCalls: [calls.weather, calls.time] }, { toolCalls: [calls.rome, calls.news, calls.oslo] }],
    });
    const whole = (call: (typeof calls)['weather']) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments.join('') },
    });
    const expected = [
      [whole(calls.weather), whole(calls.time)],
      [whole(calls.rome), whole(calls.news), whole(calls.oslo)],
    ];
    const fn = (name: string) => ({ type: 'function' as const, function: { name, parameters: { type: 'object' } } });
    const tools = [fn('get_weather'), fn('get_time'), fn('get_news')];
    const stream = noting.client.chat.completions.stream({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Weather, time and news?' }],
      tools,
      parallel_tool_calls: true,
      n: 2,
    });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    stream.on('chunk', (chunk) => chunks.push(chunk));
    const final = await stream.finalChatCompletion();
    // The deltas arrived interleaved across choices and across calls: joining by position would mix them.
    const order = chunks.flatMap((c) =>
      c.choices.flatMap((choice) => (choice.delta.tool_calls ?? []).map((call) => `${choice.index}:${call.index}`)),
    );
    assert.deepEqual(order.slice(0, 6), ['0:0', '1:0', '0:1', '1:1', '0:0', '1:2'], order.join(' '));
    assert.deepEqual(
      final.choices.map((c) => shape(c.message.tool_calls as ToolCall[])),
      expected,
    );

    const log = await logOf(noting.logId);
    assert.equal(log.status_code, 200);
    const output = JSON.parse(log.output);
    assert.deepEqual(
      output.choices.map((c: Loose) => [c.index, c.finish_reason]),
      [
        [0, 'tool_calls'],
        [1, 'tool_calls'],
      ],
    );
    assert.deepEqual(
      output.choices.map((c: Loose) => shape(c.message.tool_calls)),
      expected,
    );
    assert.deepEqual(shape(log.completion_message.tool_calls), expected[0], "choice 0's calls");
    assert.deepEqual(shape(log.tool_calls), expected[0]);
    assert.deepEqual(log.tools, tools);
  });

  it('request_breakdown through the official client (not streamed): every field as §10 and §15 give it', async () => {
    const res = await client.chat.completions
      .create({
        model: 'gpt-4o-mini',
        messages: [...MESSAGES],
        temperature: 0.2,
        metadata: { plan: 'pro' },
        // @ts-expect-error -- a platform parameter: the client sends a field it does not know as it is
        request_breakdown: true,
      })
      .withResponse();
    assert.equal(res.response.status, 200);
    const { request_breakdown: rb, ...rest } = res.data as unknown as Record<string, Loose>;
    assert.deepEqual(rest, JSON.parse(lastSent().sent[0].data), 'the rest of the answer is the upstream’s');
    assert.equal(res.data.choices[0].message.content, HELLO);
    const sent = lastSent().request.json as Record<string, unknown>;
    assert.ok(!('request_breakdown' in sent) && !('metadata' in sent), 'platform parameters stay here');

    assert.deepEqual(Object.keys(rb).sort(), [...BREAKDOWN_FIELDS].sort());
    assert.equal(rb.prompt_tokens, 19);
    assert.equal(rb.completion_tokens, 4);
    near(rb.cost, (19 * PRICE.input + 4 * PRICE.output) / 1e6, 'cost');
    assert.deepEqual(rb.prompt_messages, MESSAGES);
    assert.equal(rb.completion_message.role, 'assistant');
    assert.equal(rb.completion_message.content, HELLO);
    assert.equal(rb.model, 'gpt-4o-mini');
    assert.equal(rb.cached, false);
    assert.equal(rb.status_code, 200);
    assert.equal(rb.stream, false);
    assert.deepEqual(rb.scores, {});
    assert.equal(rb.category, 'chat');
    assert.deepEqual(rb.metadata, { plan: 'pro' });
    assert.deepEqual(rb.full_request, sent, 'the request as sent upstream');
    assert.deepEqual(rb.full_request, { model: 'gpt-4o-mini', messages: MESSAGES, temperature: 0.2 });
    assert.equal(rb.sentiment_score, null);
    assert.equal(typeof rb.latency, 'number');
    assert.equal(typeof rb.routing_time, 'number');
    assert.ok(rb.latency >= 0 && rb.routing_time >= 0);

    // The breakdown is the call as its log has it.
    const log = await logOf(res.response.headers.get('x-gatelog-log-id'));
    assert.equal(new Date(rb.timestamp).getTime(), new Date(log.timestamp).getTime(), 'timestamp');
    assert.ok(Math.abs(rb.latency - log.latency) < 1e-3, `latency ${rb.latency} vs ${log.latency}`);
    assert.ok(Math.abs(rb.routing_time - log.routing_time) < 1e-3, `routing ${rb.routing_time} vs ${log.routing_time}`);
    near(log.cost, rb.cost, 'the log’s cost');
    assert.equal(log.prompt_tokens, rb.prompt_tokens);
    assert.equal(log.completion_tokens, rb.completion_tokens);
  });
});
