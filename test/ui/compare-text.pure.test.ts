/**
 * What the compare view diffs (ui/src/lib/compare-text.ts): a proxied call's messages by role with its
 * tool calls, an embedding call's texts, a transcript; never the provider's JSON.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareText } from '../../ui/src/lib/compare-text.js';
import { toolCallTurn } from '../support/chat-messages.js';

describe('compare text', () => {
  it("reads a proxied chat's messages (content parts too), not its chat.completion", () => {
    const prompt = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
    ];
    const completion = toolCallTurn('c1', 'get_weather', '{"city":"Paris"}');
    const log = {
      log_type: 'chat',
      input: JSON.stringify(prompt),
      output: JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', choices: [{ message: completion }] }),
      prompt_messages: prompt,
      completion_message: completion,
    };
    assert.equal(compareText(log, 'input'), 'system: Be brief.\nuser: Weather in Paris?');
    assert.equal(compareText(log, 'output'), 'assistant: tool: get_weather({"city":"Paris"})');
  });

  it('reads embeddings as their texts and size, a transcription as its transcript', () => {
    const embedding = {
      log_type: 'embedding',
      input: JSON.stringify(['one', 'two']),
      output: JSON.stringify({ object: 'list', data_count: 2, dimensions: 8 }),
      embedding_count: 2,
      embedding_dimensions: 8,
    };
    assert.equal(compareText(embedding, 'input'), 'one\ntwo');
    assert.equal(compareText(embedding, 'output'), '2 inputs × 8 dims');
    const transcription = {
      log_type: 'transcription',
      input: '{"model":"whisper-1"}',
      output: '{"text":"Hi."}',
      transcript: 'Hi.',
    };
    assert.equal(compareText(transcription, 'output'), 'Hi.');
    assert.equal(compareText(transcription, 'input'), '{\n  "model": "whisper-1"\n}');
  });

  it('shows a value of no known shape as indented JSON', () => {
    const log = {
      log_type: 'chat',
      input: '{"q":"same","x":1}',
      output: null,
      prompt_messages: [],
      completion_message: null,
    };
    assert.equal(compareText(log, 'input'), '{\n  "q": "same",\n  "x": 1\n}');
    assert.equal(compareText(log, 'output'), '');
  });
});
