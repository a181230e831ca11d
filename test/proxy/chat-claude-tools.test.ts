/**
 * A streamed chat completion with a Claude model that calls two tools at once, through gatelog (the
 * official openai client, a fake Anthropic): what Anthropic received (the conversation with an earlier
 * tool round, the tools and tool_choice, translated), the tool calls the client puts together from
 * the chunks by their index, and the log — its tool calls, its usage with cache reads and writes, and
 * its cost at the catalog's Claude prices.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type OpenAI from 'openai';
import type { FakeAnthropic } from '../support/fake-anthropic.js';
import { logWhenWritten, type ProxyTestApp, startClaudeProxyApp } from '../support/proxy-app.js';
import { toolCallTurn } from '../support/chat-messages.js';

const MODEL = 'claude-sonnet-4-5';
/** Per million tokens, from the price catalog (Anthropic's public prices for Claude Sonnet 4.5). */
const SONNET = { input: 3, cacheRead: 0.3, cacheWrite: 3.75, output: 15 };
/** The catalog's cost is kept to 12 significant digits (binary noise removed): equal to that, exactly. */
const sameCost = (actual: number, expected: number) =>
  assert.equal(Number(actual.toPrecision(12)), Number(expected.toPrecision(12)), `cost ${actual} vs ${expected}`);

const TOOLS: OpenAI.Chat.ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'weather',
      description: 'The forecast for a city',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string' }, days: { type: 'integer' } },
        required: ['city'],
      },
    },
  },
  { type: 'function', function: { name: 'clock' } },
];

const HISTORY: OpenAI.Chat.ChatCompletionMessageParam[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Weather in Paris?' },
  toolCallTurn('toolu_0', 'weather', '{"city":"Paris"}'),
  { role: 'tool', tool_call_id: 'toolu_0', content: 'sunny' },
  { role: 'user', content: 'Now Oslo for two days, and the time there.' },
];

interface AssembledCall {
  id: string;
  name: string;
  arguments: string;
  /** How many chunks carried an id or a name for this index: a call's first chunk only. */
  named: number;
}

describe('a streamed Claude chat with parallel tool calls', () => {
  let p: ProxyTestApp;
  let claude: FakeAnthropic;

  before(async () => {
    ({ p, claude } = await startClaudeProxyApp('sk-ant-tools-key-0001'));
  });
  after(async () => {
    await p?.close();
    await claude?.close();
  });

  it('translates the request, streams both calls by index, and logs them with usage and cost', async () => {
    claude.message({
      content: [
        { type: 'text', text: ['Checking ', 'both.'] },
        { type: 'tool_use', id: 'toolu_w', name: 'weather', input: ['{"city":', ' "Oslo",', ' "days": 2}'] },
        { type: 'tool_use', id: 'toolu_c', name: 'clock', input: ['{"tz": ', '"Europe/Oslo"}'] },
      ],
      usage: { input_tokens: 40, output_tokens: 25, cache_read_input_tokens: 300, cache_creation_input_tokens: 60 },
    });
    const { data: stream, response } = await p.client.chat.completions
      .create({
        model: MODEL,
        messages: HISTORY,
        tools: TOOLS,
        tool_choice: 'required',
        parallel_tool_calls: true,
        max_tokens: 300,
        temperature: 0.2,
        stream: true,
        stream_options: { include_usage: true },
      })
      .withResponse();

    // The client's side: tool-call deltas put together by their index, as OpenAI's clients do.
    const calls = new Map<number, AssembledCall>();
    let content = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (!choice) continue;
      content += choice.delta.content ?? '';
      finish = choice.finish_reason ?? finish;
      for (const delta of choice.delta.tool_calls ?? []) {
        const call = calls.get(delta.index) ?? { id: '', name: '', arguments: '', named: 0 };
        if (delta.id || delta.function?.name) call.named += 1;
        call.id += delta.id ?? '';
        call.name += delta.function?.name ?? '';
        call.arguments += delta.function?.arguments ?? '';
        calls.set(delta.index, call);
      }
    }
    assert.equal(content, 'Checking both.');
    assert.equal(finish, 'tool_calls');
    assert.deepEqual(
      [...calls.entries()].sort(([a], [b]) => a - b),
      [
        [0, { id: 'toolu_w', name: 'weather', arguments: '{"city": "Oslo", "days": 2}', named: 1 }],
        [1, { id: 'toolu_c', name: 'clock', arguments: '{"tz": "Europe/Oslo"}', named: 1 }],
      ],
    );
    assert.deepEqual(JSON.parse(calls.get(0)!.arguments), { city: 'Oslo', days: 2 });
    // prompt_tokens counts every input token: the uncached, the cache reads and the cache writes.
    assert.equal(usage?.prompt_tokens, 400);
    assert.equal(usage?.completion_tokens, 25);
    assert.equal(usage?.prompt_tokens_details?.cached_tokens, 300);

    // Anthropic's side: the body as its Messages API takes it.
    const sent = claude.requests.at(-1)!;
    assert.equal(sent.path, '/v1/messages');
    assert.equal(sent.apiKey, 'sk-ant-tools-key-0001');
    const body = sent.json!;
    assert.equal(body.model, MODEL);
    assert.equal(body.stream, true);
    assert.equal(body.max_tokens, 300);
    assert.equal(body.temperature, 0.2);
    assert.deepEqual(body.system, [{ type: 'text', text: 'Be brief.' }]);
    assert.deepEqual(body.messages, [
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_0', name: 'weather', input: { city: 'Paris' } }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_0', content: 'sunny' },
          { type: 'text', text: 'Now Oslo for two days, and the time there.' },
        ],
      },
    ]);
    assert.deepEqual(body.tools, [
      {
        name: 'weather',
        description: 'The forecast for a city',
        input_schema: {
          type: 'object',
          properties: { city: { type: 'string' }, days: { type: 'integer' } },
          required: ['city'],
        },
      },
      { name: 'clock', input_schema: { type: 'object', properties: {} } },
    ]);
    // "required" is Anthropic's "any"; parallel calls allowed, so nothing disables them.
    assert.deepEqual(body.tool_choice, { type: 'any' });
    for (const field of ['parallel_tool_calls', 'stream_options'])
      assert.ok(!(field in body), `${field} is not sent to Anthropic`);

    // The log: a chat log like any other, with Claude's usage and price.
    const log = await logWhenWritten(p.t, p.a, response.headers.get('x-gatelog-log-id'));
    assert.equal(log.status_code, 200);
    assert.equal(log.log_type, 'chat');
    assert.equal(log.stream, true);
    assert.equal(log.provider_id, 'anthropic');
    assert.equal(log.model, MODEL);
    const expectedCalls = [...calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, c]) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
    assert.deepEqual(log.tool_calls, expectedCalls);
    assert.deepEqual(log.completion_message, {
      role: 'assistant',
      content: 'Checking both.',
      refusal: null,
      tool_calls: expectedCalls,
    });
    assert.deepEqual(log.tools, TOOLS);
    assert.equal(log.tool_choice, 'required');
    assert.equal(log.prompt_tokens, 400);
    assert.equal(log.completion_tokens, 25);
    const output = JSON.parse(log.output);
    assert.equal(output.choices[0].finish_reason, 'tool_calls');
    assert.equal(output.usage.prompt_tokens_details.cached_tokens, 300);
    assert.equal(output.usage.cache_read_input_tokens, 300);
    assert.equal(output.usage.cache_creation_input_tokens, 60);
    // Each kind of input token at its own price: 40 uncached, 300 read from the cache, 60 written to it.
    sameCost(
      log.cost,
      (40 * SONNET.input + 300 * SONNET.cacheRead + 60 * SONNET.cacheWrite + 25 * SONNET.output) / 1e6,
    );
  });
});
