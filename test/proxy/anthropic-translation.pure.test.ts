import { createParser } from 'eventsource-parser';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import OpenAI from 'openai';
import { AppError } from '../../src/errors.js';
import { ChatAssembler } from '../../src/gateway/chat/assembler.js';
import { chatToMessages } from '../../src/providers/anthropic/chat-to-messages.js';
import { chatErrorOf } from '../../src/providers/anthropic/errors-to-chat.js';
import { messageToChat } from '../../src/providers/anthropic/messages-to-chat.js';
import { AnthropicStreamTranslator } from '../../src/providers/anthropic/stream-to-chunks.js';
import type { TranslatedEvent } from '../../src/providers/chat-translation.js';
import {
  type FakeAnthropic,
  messageEventsFor,
  messageFor,
  type MessageScript,
  startFakeAnthropic,
} from '../support/fake-anthropic.js';

type Json = Record<string, unknown>;

const MODEL = 'claude-sonnet-4-6';
const user = (content: unknown) => ({ role: 'user', content });

/** The Anthropic body for a chat body whose other fields are `extra`. */
const translate = (messages: unknown[], extra: Json = {}) =>
  chatToMessages({ model: MODEL, messages, ...extra }, MODEL);

/** Asserts the translation refuses with a 400 naming `param`. */
function refuses(messages: unknown[], extra: Json, param: string, code?: string) {
  assert.throws(
    () => translate(messages, extra),
    (err: unknown) => {
      assert.ok(err instanceof AppError, String(err));
      assert.equal(err.status, 400);
      assert.equal(err.param, param);
      if (code !== undefined) assert.equal(err.code, code);
      return true;
    },
  );
}

describe('a chat body as an Anthropic Messages body', () => {
  it('keeps every system and developer message, in order, as the system text blocks', () => {
    const body = translate([
      { role: 'system', content: 'Be brief.' },
      { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
      user('Hi'),
      { role: 'assistant', content: 'Salut.' },
      { role: 'system', content: 'Now in German.' },
      user('Again'),
    ]);
    assert.deepEqual(body.system, [
      { type: 'text', text: 'Be brief.' },
      { type: 'text', text: 'Answer in French.' },
      { type: 'text', text: 'Now in German.' },
    ]);
    assert.deepEqual(body.messages, [
      { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Salut.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Again' }] },
    ]);
    assert.equal(body.model, MODEL);
    assert.equal(translate([user('x')]).system, undefined, 'no system messages: no system');
  });

  it('merges consecutive messages of one role into one turn, so that turns alternate', () => {
    const body = translate([
      user('one'),
      user([{ type: 'text', text: 'two' }]),
      { role: 'system', content: 'between' },
      user('three'),
      { role: 'assistant', content: 'a' },
      { role: 'assistant', content: '' },
      { role: 'assistant', content: 'b' },
    ]);
    assert.deepEqual(body.messages, [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two' },
          { type: 'text', text: 'three' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      },
    ]);
  });

  it('turns tool calls into tool_use and tool messages into one user turn of tool_results, results first', () => {
    const body = translate([
      user('weather and time?'),
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_2', type: 'function', function: { name: 'clock', arguments: '' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '12:00' }] },
      user('and tomorrow?'),
    ]);
    assert.deepEqual(body.messages, [
      { role: 'user', content: [{ type: 'text', text: 'weather and time?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'call_1', name: 'weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'call_2', name: 'clock', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: 'sunny' },
          { type: 'tool_result', tool_use_id: 'call_2', content: [{ type: 'text', text: '12:00' }] },
          { type: 'text', text: 'and tomorrow?' },
        ],
      },
    ]);
    // User text before the results in the same turn still comes after them.
    const reordered = translate([
      { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      user('note'),
      { role: 'tool', tool_call_id: 'c', content: 'done' },
    ]);
    assert.deepEqual((reordered.messages as Json[])[1], {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'c', content: 'done' },
        { type: 'text', text: 'note' },
      ],
    });
  });

  it('refuses tool-call arguments that are not a JSON object, naming them', () => {
    const call = (args: unknown) => [
      user('x'),
      {
        role: 'assistant',
        content: 'ok',
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } },
          { id: 'b', type: 'function', function: { name: 'f', arguments: args } },
        ],
      },
    ];
    refuses(call('{"city": "Par'), {}, 'messages.1.tool_calls.1.function.arguments');
    refuses(call('[1, 2]'), {}, 'messages.1.tool_calls.1.function.arguments');
    const content = (translate(call('  ')).messages as Json[])[1].content as Json[];
    assert.deepEqual(content[2], { type: 'tool_use', id: 'b', name: 'f', input: {} }, 'blank arguments are {}');
    refuses([{ role: 'tool', content: 'x' }], {}, 'messages.0.tool_call_id');
    const silent = translate([
      { role: 'assistant', tool_calls: [{ id: 'q', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'q', content: '' },
    ]);
    assert.deepEqual(
      (silent.messages as Json[])[1].content,
      [{ type: 'tool_result', tool_use_id: 'q' }],
      'an empty result',
    );
  });

  it('sends images: a data: URL as base64 (image/jpg read as JPEG), an https: URL as a url source', () => {
    const body = translate([
      user([
        { type: 'text', text: 'compare' },
        { type: 'image_url', image_url: { url: 'data:image/jpg;base64,/9j/AAA=' } },
        { type: 'image_url', image_url: { url: 'data:image/PNG;base64,iVBORw0=', detail: 'high' } },
        { type: 'image_url', image_url: { url: 'https://example.com/cat.webp' } },
      ]),
    ]);
    assert.deepEqual((body.messages as Json[])[0].content, [
      { type: 'text', text: 'compare' },
      { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/AAA=' } },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0=' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.webp' } },
    ]);
    const image = (url: string) => [
      user([
        { type: 'text', text: 'see' },
        { type: 'image_url', image_url: { url } },
      ]),
    ];
    refuses(image('data:image/bmp;base64,Qk0='), {}, 'messages.0.content.1.image_url.url', 'unsupported_parameter');
    refuses(image('data:image/png,rawbytes'), {}, 'messages.0.content.1.image_url.url');
    refuses(image('ftp://example.com/a.png'), {}, 'messages.0.content.1.image_url.url');
    refuses(
      [user([{ type: 'input_audio', input_audio: { data: '', format: 'wav' } }])],
      {},
      'messages.0.content.0.type',
    );
    refuses(
      [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }, user('x')],
      {},
      'messages.0.content.0.type',
    );
  });

  it('sends a PDF file part as a document, and refuses an OpenAI file id', () => {
    const body = translate([
      user([{ type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } }]),
    ]);
    assert.deepEqual((body.messages as Json[])[0].content, [
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' }, title: 'a.pdf' },
    ]);
    refuses([user([{ type: 'file', file: { file_id: 'file-abc' } }])], {}, 'messages.0.content.0.file.file_id');
  });

  it('sends tools with their schema (an empty object schema by default) and refuses other tool types', () => {
    const body = translate([user('x')], {
      tools: [
        {
          type: 'function',
          function: {
            name: 'weather',
            description: 'Weather now',
            parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          },
        },
        { type: 'function', function: { name: 'clock' } },
      ],
    });
    assert.deepEqual(body.tools, [
      {
        name: 'weather',
        description: 'Weather now',
        input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
      { name: 'clock', input_schema: { type: 'object', properties: {} } },
    ]);
    refuses(
      [user('x')],
      {
        tools: [
          { type: 'function', function: { name: 'f' } },
          { type: 'custom', custom: { name: 'g' } },
        ],
      },
      'tools.1.type',
      'unsupported_parameter',
    );
    refuses([user('x')], { tools: [{ type: 'function', function: {} }] }, 'tools.0.function.name');
  });

  it('maps tool_choice, and parallel_tool_calls: false to disable_parallel_tool_use', () => {
    const tools = [{ type: 'function', function: { name: 'weather' } }];
    const choice = (extra: Json) => translate([user('x')], { tools, ...extra }).tool_choice;
    assert.deepEqual(choice({ tool_choice: 'auto' }), { type: 'auto' });
    assert.deepEqual(choice({ tool_choice: 'required' }), { type: 'any' });
    assert.deepEqual(choice({ tool_choice: 'none' }), { type: 'none' });
    assert.deepEqual(choice({ tool_choice: { type: 'function', function: { name: 'weather' } } }), {
      type: 'tool',
      name: 'weather',
    });
    assert.equal(choice({}), undefined);
    assert.deepEqual(choice({ parallel_tool_calls: false }), { type: 'auto', disable_parallel_tool_use: true });
    assert.deepEqual(choice({ tool_choice: 'required', parallel_tool_calls: false }), {
      type: 'any',
      disable_parallel_tool_use: true,
    });
    assert.deepEqual(
      choice({ tool_choice: { type: 'function', function: { name: 'weather' } }, parallel_tool_calls: false }),
      {
        type: 'tool',
        name: 'weather',
        disable_parallel_tool_use: true,
      },
    );
    assert.deepEqual(choice({ tool_choice: 'none', parallel_tool_calls: false }), { type: 'none' });
    assert.equal(choice({ parallel_tool_calls: true }), undefined);
    refuses([user('x')], { tools, tool_choice: 'sometimes' }, 'tool_choice');
    refuses([user('x')], { tools, tool_choice: { type: 'allowed_tools', allowed_tools: {} } }, 'tool_choice.type');
    refuses([user('x')], { tool_choice: 'required' }, 'tool_choice');
    assert.equal(
      translate([user('x')], { tool_choice: 'none' }).tool_choice,
      undefined,
      'no tools: none is the default',
    );
  });

  it('maps stop, the token limit (4096 by default), temperature, top_p and user', () => {
    const body = translate([user('x')], {
      stop: 'END',
      max_tokens: 100,
      max_completion_tokens: 50,
      temperature: 0.2,
      top_p: 0.9,
      user: 'u-42',
    });
    assert.deepEqual(body.stop_sequences, ['END']);
    assert.equal(body.max_tokens, 50, 'max_completion_tokens wins over max_tokens');
    assert.equal(body.temperature, 0.2);
    assert.equal(body.top_p, 0.9);
    assert.deepEqual(body.metadata, { user_id: 'u-42' });
    assert.deepEqual(translate([user('x')], { stop: ['a', 'b'] }).stop_sequences, ['a', 'b']);
    assert.equal(translate([user('x')], { max_tokens: 77 }).max_tokens, 77);
    const plain = translate([user('x')]);
    assert.equal(plain.max_tokens, 4096);
    for (const absent of [
      'stop_sequences',
      'temperature',
      'top_p',
      'metadata',
      'stream',
      'tools',
      'tool_choice',
      'thinking',
    ]) {
      assert.equal(plain[absent], undefined, absent);
    }
    refuses([user('x')], { temperature: 1.5 }, 'temperature');
    refuses([user('x')], { temperature: -0.1 }, 'temperature');
    refuses([user('x')], { max_completion_tokens: 0 }, 'max_completion_tokens');
    refuses([user('x')], { stop: ['ok', 3] }, 'stop.1');
    assert.equal(translate([user('x')], { stream: true, stream_options: { include_usage: true } }).stream, true);
  });

  it('refuses, naming it, each parameter Claude cannot honour', () => {
    const refused: [Json, string][] = [
      [{ n: 2 }, 'n'],
      [{ logprobs: true }, 'logprobs'],
      [{ top_logprobs: 3 }, 'top_logprobs'],
      [{ logit_bias: { '50256': -100 } }, 'logit_bias'],
      [{ frequency_penalty: 0.5 }, 'frequency_penalty'],
      [{ presence_penalty: -1 }, 'presence_penalty'],
      [{ seed: 7 }, 'seed'],
      [{ audio: { voice: 'alloy', format: 'wav' } }, 'audio'],
      [{ modalities: ['text', 'audio'] }, 'modalities'],
      [{ prediction: { type: 'content', content: 'x' } }, 'prediction'],
      [{ web_search_options: {} }, 'web_search_options'],
      [{ functions: [{ name: 'f' }] }, 'functions'],
      [{ function_call: 'auto' }, 'function_call'],
      [{ response_format: { type: 'json_object' } }, 'response_format'],
      [{ response_format: { type: 'json_schema', json_schema: { name: 's', schema: {} } } }, 'response_format'],
    ];
    for (const [extra, param] of refused) refuses([user('x')], extra, param, 'unsupported_parameter');
    // Their neutral values change nothing, and pass.
    const neutral = translate([user('x')], {
      n: 1,
      logprobs: false,
      logit_bias: {},
      frequency_penalty: 0,
      presence_penalty: 0,
      modalities: ['text'],
      response_format: { type: 'text' },
      seed: null,
      store: true,
      service_tier: 'auto',
      prompt_cache_key: 'k',
      verbosity: 'low',
    });
    assert.deepEqual(Object.keys(neutral).sort(), ['max_tokens', 'messages', 'model']);
    refuses([{ role: 'function', name: 'f', content: 'x' }], {}, 'messages.0.role', 'unsupported_parameter');
    refuses(
      [user('x'), { role: 'assistant', function_call: { name: 'f', arguments: '{}' } }],
      {},
      'messages.1.function_call',
    );
  });

  it("passes Claude's own parameters (sent as extra body) through unchanged", () => {
    const body = translate([user('x')], { top_k: 5, service_tier: 'auto' });
    assert.equal(body.top_k, 5);
    assert.equal(body.service_tier, undefined, "OpenAI's service_tier is not Anthropic's");
  });

  it('maps reasoning_effort to extended thinking, with its budget below max_tokens', () => {
    const medium = translate([user('x')], { reasoning_effort: 'medium' });
    assert.deepEqual(medium.thinking, { type: 'enabled', budget_tokens: 2048 });
    assert.equal(medium.max_tokens, 2048 + 4096, 'no max given: the answer keeps its default room above the budget');
    const low = translate([user('x')], { reasoning_effort: 'low', max_completion_tokens: 3000 });
    assert.deepEqual([low.thinking, low.max_tokens], [{ type: 'enabled', budget_tokens: 1024 }, 3000]);
    assert.equal(translate([user('x')], { reasoning_effort: 'none' }).thinking, undefined);
    refuses([user('x')], { reasoning_effort: 'high', max_tokens: 4096 }, 'reasoning_effort');
    refuses([user('x')], { reasoning_effort: 'turbo' }, 'reasoning_effort');
    refuses([user('x')], { reasoning_effort: 'constructor' }, 'reasoning_effort');
    refuses([user('x')], { reasoning_effort: 'low', temperature: 0.5 }, 'temperature');
    refuses(
      [user('x')],
      { reasoning_effort: 'low', tools: [{ type: 'function', function: { name: 'f' } }], tool_choice: 'required' },
      'tool_choice',
    );
  });

  it('sends back the thinking blocks of an assistant turn first, signatures untouched', () => {
    const thinking = { type: 'thinking', thinking: 'Let me see.', signature: 'sig' };
    const body = translate([
      user('x'),
      {
        role: 'assistant',
        content: 'Looking.',
        thinking_blocks: [thinking],
        tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 't', content: '42' },
    ]);
    assert.deepEqual((body.messages as Json[])[1].content, [
      thinking,
      { type: 'text', text: 'Looking.' },
      { type: 'tool_use', id: 't', name: 'f', input: {} },
    ]);
    refuses(
      [user('x'), { role: 'assistant', content: 'a', thinking_blocks: [{ type: 'thinking', thinking: 'x' }] }],
      {},
      'messages.1.thinking_blocks.0',
    );
  });

  it('refuses a conversation with nothing to send', () => {
    refuses([{ role: 'system', content: 'only instructions' }], {}, 'messages');
    refuses([user('')], {}, 'messages');
  });
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
      tool_calls: [
        { id: 'toolu_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
        { id: 'toolu_b', type: 'function', function: { name: 'clock', arguments: '{}' } },
      ],
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
    const usage = {
      input_tokens: 10,
      output_tokens: 20,
      cache_read_input_tokens: 300,
      cache_creation_input_tokens: 40,
    };
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
    assert.deepEqual(message.tool_calls, [
      { id: 'toolu_a', type: 'function', function: { name: 'now', arguments: '{}' } },
      { id: 'toolu_b', type: 'function', function: { name: 'echo', arguments: '{"x":1}' } },
    ]);
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
    const usage = {
      input_tokens: 50,
      output_tokens: 30,
      cache_read_input_tokens: 1000,
      cache_creation_input_tokens: 200,
    };
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
        { id: 'toolu_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris","unit":"C"}' } },
        { id: 'toolu_2', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
        { id: 'toolu_3', type: 'function', function: { name: 'clock', arguments: '{}' } },
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
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'toolu_0', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }],
    },
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
