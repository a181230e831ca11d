/**
 * Claude's answers translated into chat completions: a whole message as a chat.completion (stop
 * reasons, tokens, errors), and its event stream as chat.completion.chunk events fed to ChatAssembler.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../src/errors.js';
import { ChatAssembler } from '../../src/gateway/chat/assembler.js';
import { chatErrorOf } from '../../src/providers/anthropic/errors-to-chat.js';
import { messageToChat } from '../../src/providers/anthropic/messages-to-chat.js';
import { AnthropicStreamTranslator } from '../../src/providers/anthropic/stream-to-chunks.js';
import type { TranslatedEvent } from '../../src/providers/chat-translation.js';
import { messageEventsFor, messageFor, type MessageScript } from '../support/fake-anthropic-answers.js';

type Json = Record<string, unknown>;

const MODEL = 'claude-sonnet-4-6';

/** A chat completion's tool call, as the translation writes it. */
const toolCall = (id: string, name: string, args: string) => ({
  id,
  type: 'function',
  function: { name, arguments: args },
});

/** Claude's four usage counts: input, output, cache reads, cache writes. */
const claudeUsage = (input: number, output: number, cacheRead: number, cacheCreation: number) => ({
  input_tokens: input,
  output_tokens: output,
  cache_read_input_tokens: cacheRead,
  cache_creation_input_tokens: cacheCreation,
});

describe('a Claude message as a chat.completion', () => {
  it('joins the text, turns tool_use into tool_calls, keeps thinking, and names the model Anthropic answered with', () => {
    const script: MessageScript = {
      model: 'claude-sonnet-4-6-20260101',
      content: [
        { type: 'thinking', thinking: ['Hmm.'], signature: 'sig-1' },
        { type: 'text', text: ['Checking '] },
        { type: 'text', text: ['both.'] },
        { type: 'tool_use', id: 'toolu_a', name: 'weather', input: ['{"city":"Paris"}'] },
        { type: 'tool_use', id: 'toolu_b', name: 'clock', input: [] },
      ],
    };
    const { completion } = messageToChat(messageFor(script, MODEL, 'msg_1'), 1_700_000_000_500);
    assert.equal(completion.id, 'msg_1');
    assert.equal(completion.object, 'chat.completion');
    assert.equal(completion.created, 1_700_000_000);
    assert.equal(completion.model, 'claude-sonnet-4-6-20260101');
    const [choice] = completion.choices as Json[];
    assert.equal(choice.index, 0);
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.deepEqual(choice.message, {
      role: 'assistant',
      content: 'Checking both.',
      refusal: null,
      tool_calls: [toolCall('toolu_a', 'weather', '{"city":"Paris"}'), toolCall('toolu_b', 'clock', '{}')],
      reasoning_content: 'Hmm.',
      thinking_blocks: [{ type: 'thinking', thinking: 'Hmm.', signature: 'sig-1' }],
    });
    const toolsOnly = messageToChat(
      messageFor({ content: [{ type: 'tool_use', id: 't', name: 'f', input: [] }] }, MODEL, 'm'),
    );
    assert.equal(((toolsOnly.completion.choices as Json[])[0].message as Json).content, null);
    assert.throws(
      () => messageToChat({ type: 'error' }),
      (err: unknown) => err instanceof AppError && err.status === 502,
    );
  });

  it('maps every stop_reason to a finish_reason', () => {
    const table: [string, string][] = [
      ['end_turn', 'stop'],
      ['stop_sequence', 'stop'],
      ['max_tokens', 'length'],
      ['model_context_window_exceeded', 'length'],
      ['tool_use', 'tool_calls'],
      ['pause_turn', 'stop'],
      ['refusal', 'content_filter'],
      ['a_reason_from_the_future', 'stop'],
    ];
    for (const [stopReason, finish] of table) {
      const { completion } = messageToChat(messageFor({ stopReason }, MODEL, 'm'));
      assert.equal((completion.choices as Json[])[0].finish_reason, finish, stopReason);
    }
  });

  it('counts every input token as a prompt token, cache reads as cached, and keeps the four raw counts', () => {
    const usage = claudeUsage(10, 20, 300, 40);
    const translated = messageToChat(messageFor({ usage }, MODEL, 'm'));
    assert.deepEqual(translated.completion.usage, {
      prompt_tokens: 350,
      completion_tokens: 20,
      total_tokens: 370,
      prompt_tokens_details: { cached_tokens: 300 },
      cache_read_input_tokens: 300,
      cache_creation_input_tokens: 40,
    });
    assert.deepEqual(translated.usage, {
      input: 350,
      output: 20,
      cacheRead: 300,
      cacheWrite: 40,
      cacheWrite1h: 0,
      reasoning: undefined,
    });
  });

  it("puts Anthropic's errors in OpenAI's shape", () => {
    assert.deepEqual(chatErrorOf({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, 529), {
      error: { message: 'Overloaded', type: 'overloaded_error', param: null, code: 'overloaded_error' },
    });
    assert.deepEqual(chatErrorOf('<html>bad gateway</html>', 502).error.type, 'api_error');
    assert.equal(
      chatErrorOf('{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}').error.code,
      'rate_limit_error',
    );
    assert.equal(chatErrorOf({}, 429).error.type, 'rate_limit_error');
  });
});

/** Feeds Anthropic events to a translator; returns it and every event it produced. */
function run(events: { event: string; data: string }[], includeUsage = false) {
  const translator = new AnthropicStreamTranslator({ includeUsage, now: () => 1_700_000_000_000 });
  const out: TranslatedEvent[] = [];
  for (const event of events) out.push(...translator.event(event));
  return { translator, out };
}

const chunks = (out: TranslatedEvent[]) => out.flatMap((e) => (e.chunk === null ? [] : [e.chunk]));
const deltas = (out: TranslatedEvent[]) =>
  chunks(out).flatMap((c) => (c.choices as Json[]).map((choice) => choice.delta as Json));
const ev = (type: string, fields: Json = {}) => ({ event: type, data: JSON.stringify({ type, ...fields }) });

/** The assembled completion, as the chat route's log reads it from the chunks. */
function assemble(out: TranslatedEvent[]): Json {
  const assembler = new ChatAssembler(1_000_000);
  for (const chunk of chunks(out)) assembler.add(chunk, 0);
  return assembler.completion();
}

describe("Claude's event stream as chat.completion.chunk events", () => {
  it('starts with the role, streams the text, finishes, adds the usage event, then [DONE]', () => {
    const { out, translator } = run(messageEventsFor({}, MODEL, 'msg_s'), true);
    const first = out[0].chunk!;
    assert.deepEqual(
      [first.id, first.object, first.created, first.model],
      ['msg_s', 'chat.completion.chunk', 1_700_000_000, MODEL],
    );
    assert.deepEqual((first.choices as Json[])[0], {
      index: 0,
      delta: { role: 'assistant', content: '' },
      logprobs: null,
      finish_reason: null,
    });
    assert.deepEqual(
      deltas(out)
        .map((d) => d.content)
        .filter((c) => c !== undefined),
      ['', 'Hello', ', ', 'world', '!'],
    );
    const texts = out.map((e) => e.text);
    assert.ok(texts.every((t) => t.startsWith('data: ') && t.endsWith('\n\n')));
    assert.equal(texts.at(-1), 'data: [DONE]\n\n');
    const finish = out.at(-3)!.chunk!;
    assert.equal((finish.choices as Json[])[0].finish_reason, 'stop');
    const usage = out.at(-2)!;
    assert.deepEqual(usage.chunk!.choices, []);
    assert.equal(usage.hidden, false, 'the client asked for it');
    assert.equal((usage.chunk!.usage as Json).prompt_tokens, 21);
    assert.ok(translator.completed);
    assert.equal(translator.error, null);
    assert.equal(texts.filter((t) => t.includes('ping')).length, 0);
  });

  it('ignores ping events', () => {
    const { out } = run([ev('ping'), ev('ping', { extra: 1 })]);
    assert.deepEqual(out, []);
  });

  it('numbers tool calls from 0 in start order, with id, type and name on the first chunk only', () => {
    const script: MessageScript = {
      content: [
        { type: 'thinking', thinking: ['plan'], signature: 'sig' },
        { type: 'text', text: ['Let me check.'] },
        { type: 'tool_use', id: 'toolu_w', name: 'weather', input: ['{"ci', '', 'ty":', '"Paris"}'] },
        { type: 'tool_use', id: 'toolu_t', name: 'clock', input: ['{"tz":"CET"}'] },
      ],
    };
    const { out } = run(messageEventsFor(script, MODEL, 'm'));
    const calls = deltas(out).flatMap((d) => (Array.isArray(d.tool_calls) ? (d.tool_calls as Json[]) : []));
    assert.deepEqual(calls, [
      { index: 0, id: 'toolu_w', type: 'function', function: { name: 'weather', arguments: '' } },
      { index: 0, function: { arguments: '{"ci' } },
      { index: 0, function: { arguments: 'ty":' } },
      { index: 0, function: { arguments: '"Paris"}' } },
      { index: 1, id: 'toolu_t', type: 'function', function: { name: 'clock', arguments: '' } },
      { index: 1, function: { arguments: '{"tz":"CET"}' } },
    ]);
    assert.equal(calls.filter((c) => (c.function as Json).arguments === '').length, 2, 'an empty piece is not sent');
  });

  it('gives a tool call without argument deltas the arguments {}', () => {
    const script: MessageScript = {
      content: [
        { type: 'tool_use', id: 'toolu_a', name: 'now', input: [] },
        { type: 'tool_use', id: 'toolu_b', name: 'echo', input: ['{"x":1}'] },
      ],
    };
    const { out } = run(messageEventsFor(script, MODEL, 'm'));
    const completion = assemble(out);
    const message = (completion.choices as Json[])[0].message as Json;
    assert.deepEqual(message.tool_calls, [toolCall('toolu_a', 'now', '{}'), toolCall('toolu_b', 'echo', '{"x":1}')]);
  });

  it('streams thinking as reasoning_content, and keeps its signature for the log only', () => {
    const script: MessageScript = {
      content: [
        { type: 'thinking', thinking: ['First, ', 'think.'], signature: 'EqQBsecret' },
        { type: 'redacted_thinking', data: 'opaque' },
        { type: 'text', text: ['Done.'] },
      ],
    };
    const { out, translator } = run(messageEventsFor(script, MODEL, 'm'));
    assert.deepEqual(
      deltas(out).flatMap((d) => (d.reasoning_content === undefined ? [] : [d.reasoning_content])),
      ['First, ', 'think.'],
    );
    assert.ok(out.every((e) => !e.text.includes('EqQBsecret') && !e.text.includes('opaque')));
    assert.equal(translator.reasoningContent, 'First, think.');
    assert.deepEqual(translator.thinkingBlocks, [
      { type: 'thinking', thinking: 'First, think.', signature: 'EqQBsecret' },
      { type: 'redacted_thinking', data: 'opaque' },
    ]);
  });

  it("reads message_delta's usage as cumulative: it replaces message_start's counts, never adds to them", () => {
    const usage = claudeUsage(50, 30, 1000, 200);
    const { out, translator } = run(messageEventsFor({ usage }, MODEL, 'm'));
    assert.deepEqual(translator.usage, {
      input: 1250,
      output: 30,
      cacheRead: 1000,
      cacheWrite: 200,
      cacheWrite1h: 0,
      reasoning: undefined,
    });
    const final = out.at(-2)!.chunk!.usage as Json;
    assert.deepEqual([final.prompt_tokens, final.completion_tokens, final.total_tokens], [1250, 30, 1280]);
    // A message_delta that carries only output_tokens (as older API versions send) keeps the input counts.
    const older = run([
      ev('message_start', {
        message: { id: 'm', model: MODEL, usage: { input_tokens: 7, output_tokens: 1, cache_read_input_tokens: 3 } },
      }),
      ev('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } }),
      ev('message_stop'),
    ]);
    assert.deepEqual(older.translator.usage, {
      input: 10,
      output: 9,
      cacheRead: 3,
      cacheWrite: 0,
      cacheWrite1h: 0,
      reasoning: undefined,
    });
  });

  it('marks the usage event hidden when the client did not ask for it (it is still made, for the log)', () => {
    const { out } = run(messageEventsFor({}, MODEL, 'm'), false);
    const usageEvents = out.filter(
      (e) => e.chunk !== null && Array.isArray(e.chunk.choices) && e.chunk.choices.length === 0,
    );
    assert.equal(usageEvents.length, 1);
    assert.equal(usageEvents[0].hidden, true);
    assert.ok(out.filter((e) => e !== usageEvents[0]).every((e) => !e.hidden));
  });

  it('maps the stop_reason of message_delta to the finish_reason', () => {
    for (const [stopReason, finish] of [
      ['end_turn', 'stop'],
      ['stop_sequence', 'stop'],
      ['max_tokens', 'length'],
      ['tool_use', 'tool_calls'],
      ['refusal', 'content_filter'],
    ]) {
      const { out, translator } = run(messageEventsFor({ stopReason }, MODEL, 'm'));
      assert.equal((assemble(out).choices as Json[])[0].finish_reason, finish, stopReason);
      assert.equal(translator.stopReason, stopReason);
    }
  });

  it('turns an in-band error event into an OpenAI error event: no finish_reason, no [DONE], a failed call', () => {
    const events = messageEventsFor({}, MODEL, 'm').slice(0, 5);
    events.push({
      event: 'error',
      data: JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
    });
    events.push(...messageEventsFor({}, MODEL, 'm').slice(-2));
    const { out, translator } = run(events, true);
    assert.equal(
      out.at(-1)!.text,
      'data: {"error":{"message":"Overloaded","type":"overloaded_error","param":null,"code":"overloaded_error"}}\n\n',
    );
    assert.equal(out.at(-1)!.chunk, null);
    assert.ok(out.every((e) => e.text !== 'data: [DONE]\n\n'));
    assert.ok(chunks(out).every((c) => (c.choices as Json[]).every((choice) => choice.finish_reason === null)));
    assert.equal(translator.completed, false);
    assert.equal(translator.error?.type, 'overloaded_error');
    assert.ok(translator.over);
  });

  it('fails a stream that ends before message_stop: an error event, no [DONE]', () => {
    const { out, translator } = run(messageEventsFor({}, MODEL, 'm').slice(0, -1));
    assert.equal(translator.completed, false);
    const ending = translator.end();
    assert.equal(ending.length, 1);
    assert.match(
      ending[0].text,
      /^data: \{"error":\{"message":"The provider ended its stream before its last event\.","type":"upstream_error","param":null,"code":"stream_interrupted"\}\}\n\n$/,
    );
    assert.ok([...out, ...ending].every((e) => e.text !== 'data: [DONE]\n\n'));
    assert.ok(translator.error !== null);
    const whole = run(messageEventsFor({}, MODEL, 'm'));
    assert.deepEqual(whole.translator.end(), [], 'a whole stream ends with nothing more');
  });

  it('refuses an event that is not JSON (the stream cannot be read on)', () => {
    const translator = new AnthropicStreamTranslator({ includeUsage: false });
    assert.throws(
      () => translator.event({ event: 'content_block_delta', data: '{not json' }),
      (err: unknown) => err instanceof AppError && err.status === 502,
    );
  });

  it('feeds ChatAssembler: parallel tool calls whole by index, finish_reason, usage with cached tokens', () => {
    const script: MessageScript = {
      content: [
        { type: 'text', text: ['Checking ', 'both.'] },
        { type: 'tool_use', id: 'toolu_1', name: 'weather', input: ['{"city":', '"Paris",', '"unit":"C"}'] },
        { type: 'tool_use', id: 'toolu_2', name: 'weather', input: ['{"city":', '"Oslo"}'] },
        { type: 'tool_use', id: 'toolu_3', name: 'clock', input: [] },
      ],
      usage: { input_tokens: 12, output_tokens: 48, cache_read_input_tokens: 2048, cache_creation_input_tokens: 64 },
    };
    const { out } = run(messageEventsFor(script, MODEL, 'msg_p'));
    const completion = assemble(out);
    assert.equal(completion.id, 'msg_p');
    assert.equal(completion.model, MODEL);
    const [choice] = completion.choices as Json[];
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.deepEqual(choice.message, {
      role: 'assistant',
      content: 'Checking both.',
      refusal: null,
      tool_calls: [
        toolCall('toolu_1', 'weather', '{"city":"Paris","unit":"C"}'),
        toolCall('toolu_2', 'weather', '{"city":"Oslo"}'),
        toolCall('toolu_3', 'clock', '{}'),
      ],
    });
    assert.deepEqual(completion.usage, {
      prompt_tokens: 2124,
      completion_tokens: 48,
      total_tokens: 2172,
      prompt_tokens_details: { cached_tokens: 2048 },
      cache_read_input_tokens: 2048,
      cache_creation_input_tokens: 64,
    });
    // The streamed answer, assembled, is the answer the same message gives whole.
    const whole = messageToChat(messageFor(script, MODEL, 'msg_p'), 1_700_000_000_000).completion;
    assert.deepEqual((whole.choices as Json[])[0], choice);
    assert.deepEqual(whole.usage, completion.usage);
  });
});
