/**
 * The previews of a log (src/logs/preview.ts), over the shapes each kind of log is stored in: what the
 * logging API takes, and what the proxy stores for chat, Claude (native and translated), Responses,
 * embeddings and transcriptions, and OTLP spans. Never the provider's JSON.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { logPreviews, PREVIEW_CHARS, type PreviewSource } from '../../src/logs/preview.js';

const previews = (source: Partial<PreviewSource>) =>
  logPreviews({ logType: 'chat', input: null, output: null, ...source });

describe('log previews', () => {
  it('logging API: a string, messages, a message and JSON text as the caller sent them', () => {
    assert.deepEqual(previews({ input: 'Hello\n  there', output: 'Hi!' }), { input: 'Hello there', output: 'Hi!' });
    assert.deepEqual(
      previews({
        input: JSON.stringify([
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'First question' },
          { role: 'assistant', content: 'First answer' },
          { role: 'user', content: 'Second question' },
        ]),
        output: JSON.stringify({ role: 'assistant', content: 'Second answer' }),
      }),
      { input: 'Second question', output: 'Second answer' },
    );
    // A span's input of no known shape is what its code was given, as compact JSON.
    assert.deepEqual(previews({ logType: 'tool', input: { query: 'weather', city: 'Paris' }, output: 42 }), {
      input: '{"query":"weather","city":"Paris"}',
      output: '42',
    });
  });

  it('chat: the last user message from content parts, and the answer, not the chat.completion', () => {
    const prompt = [
      { role: 'system', content: 'You describe pictures.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        ],
      },
    ];
    const answer = { role: 'assistant', content: 'A cat on a mat.', refusal: null };
    const output = {
      id: 'chatcmpl-123',
      object: 'chat.completion',
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: answer, finish_reason: 'stop' }],
      usage: { prompt_tokens: 10, completion_tokens: 5 },
    };
    assert.deepEqual(previews({ input: prompt, promptMessages: prompt, completionMessage: answer, output }), {
      input: 'What is in [image]',
      output: 'A cat on a mat.',
    });
    // Read from the answer when no completion message was kept (a log sent with the provider's JSON).
    assert.equal(previews({ input: prompt, output: JSON.stringify(output) }).output, 'A cat on a mat.');
  });

  it('chat: tool calls as tool: name(args), a refusal named', () => {
    const call = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };
    const message = { role: 'assistant', content: null, tool_calls: [call] };
    assert.equal(
      previews({ completionMessage: message, toolCalls: [call] }).output,
      'tool: get_weather({"city":"Paris"})',
    );
    assert.equal(
      previews({ completionMessage: { role: 'assistant', content: null, refusal: 'I cannot help.' } }).output,
      'refusal: I cannot help.',
    );
    // The input after a tool's answer is still what the person wrote.
    const prompt = [
      { role: 'user', content: 'Weather in Paris?' },
      message,
      { role: 'tool', tool_call_id: 'call_1', content: '21C' },
    ];
    assert.equal(previews({ promptMessages: prompt }).input, 'Weather in Paris?');
  });

  it('Claude (native): content blocks in, the message out', () => {
    const prompt = [
      { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Bonjour' }] },
    ];
    const output = {
      id: 'msg_01',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [
        { type: 'thinking', thinking: 'hmm' },
        { type: 'text', text: 'Salut' },
        { type: 'tool_use', id: 'tu_1', name: 'lookup', input: { q: 'x' } },
      ],
      usage: { input_tokens: 3, output_tokens: 2 },
    };
    const completion = {
      role: 'assistant',
      content: 'Salut',
      tool_calls: [{ id: 'tu_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }],
    };
    assert.deepEqual(previews({ promptMessages: prompt, input: prompt, output, completionMessage: completion }), {
      input: 'Bonjour',
      output: 'Salut · tool: lookup({"q":"x"})',
    });
    // The message alone (no completion message kept) reads the same.
    assert.equal(previews({ output }).output, 'Salut · tool: lookup({"q":"x"})');
  });

  it('Responses: input items with input_text parts, the response output', () => {
    const input = {
      model: 'gpt-4o',
      instructions: 'Be brief.',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'Name a color' }] }],
    };
    const output = {
      id: 'resp_1',
      object: 'response',
      output: [
        { type: 'reasoning', summary: [] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Blue', annotations: [] }] },
      ],
    };
    assert.deepEqual(previews({ logType: 'response', input, output }), { input: 'Name a color', output: 'Blue' });
    const called = { object: 'response', output: [{ type: 'function_call', name: 'paint', arguments: '{"c":1}' }] };
    assert.equal(previews({ logType: 'response', output: called }).output, 'tool: paint({"c":1})');
  });

  it('embeddings: the texts in, N inputs × D dims out', () => {
    const output = { object: 'list', model: 'text-embedding-3-small', usage: {}, data_count: 2, dimensions: 1536 };
    assert.deepEqual(
      previews({
        logType: 'embedding',
        input: ['alpha', 'beta'],
        output,
        embeddingCount: 2,
        embeddingDimensions: 1536,
      }),
      { input: 'alpha | beta', output: '2 inputs × 1536 dims' },
    );
    assert.deepEqual(previews({ logType: 'embedding', input: [[1, 2, 3]], embeddingCount: 1 }), {
      input: '[1 token lists]',
      output: '1 input',
    });
  });

  it('transcriptions: the audio file in, the transcript out', () => {
    const input = {
      model: 'whisper-1',
      file: { filename: 'hello.mp3', format: 'mp3', bytes: 9000, duration_seconds: 1.332 },
      language: 'en',
      prompt: null,
    };
    assert.deepEqual(
      previews({
        logType: 'transcription',
        input,
        output: { text: 'Hello.' },
        transcript: 'Hello.',
        audioDuration: 1.332,
      }),
      { input: 'hello.mp3 · 1.3 s · en', output: 'Hello.' },
    );
  });

  it('a failed call: its error message; one line, cut at PREVIEW_CHARS', () => {
    assert.deepEqual(previews({ input: 'hi', errorMessage: 'rate limited' }), {
      input: 'hi',
      output: 'error: rate limited',
    });
    assert.equal(previews({ output: { error: { message: 'bad key', type: 'auth' } } }).output, 'error: bad key');
    const long = previews({ input: 'word '.repeat(10_000) }).input!;
    assert.equal(long.length, PREVIEW_CHARS);
    assert.ok(long.endsWith('…'));
    assert.deepEqual(previews({}), { input: null, output: null });
  });
});
