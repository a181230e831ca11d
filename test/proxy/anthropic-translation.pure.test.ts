/**
 * The translation of a chat body into an Anthropic Messages body (what it keeps, merges, maps and
 * refuses). Answers and streams back: anthropic-translation-answers; both official clients over HTTP:
 * anthropic-translation-clients.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../src/errors.js';
import { chatToMessages } from '../../src/providers/anthropic/chat-to-messages.js';

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
