/**
 * The list's previews of every kind of log, end to end: calls proxied through gatelog to fake providers
 * with the official clients' shapes (chat with content parts, tool calls, Claude native and translated,
 * Responses, embeddings, a transcription), a log sent to the logging API, OTLP spans; then the list
 * read as the explorer reads it. Each row reads as what was written and what was answered, never the
 * provider's JSON; the live tail's rows carry the same previews.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { audioPath } from '../support/audio.js';
import type { FakeAnthropic } from '../support/fake-anthropic.js';
import { api } from '../support/harness.js';
import { genAiPayload } from '../support/otlp-payloads.js';
import { logNamedBy, type ProxyTestApp, startClaudeProxyApp } from '../support/proxy-app.js';

interface Row {
  unique_id: string;
  log_type: string;
  input_preview: string | null;
  output_preview: string | null;
  span_name: string | null;
}

describe('previews of proxied and logged calls in the list', () => {
  let p: ProxyTestApp;
  let claude: FakeAnthropic;
  const ids: Record<string, string> = {};

  before(async () => {
    ({ p, claude } = await startClaudeProxyApp());
  });
  after(async () => {
    await p?.close();
    await claude?.close();
  });

  async function rows(): Promise<Map<string, Row>> {
    await p.t.flush();
    const res = await api(p.t.baseUrl, 'POST', '/api/request-logs/list/?page_size=100', {
      key: p.a.key,
      body: {},
    });
    assert.equal(res.status, 200, res.text);
    return new Map((res.body.results as Row[]).map((r) => [r.unique_id, r]));
  }

  it('stores what was written and what was answered for each kind of call', async () => {
    // Chat, the AI SDK's way: the user's message as content parts.
    p.fake.chat({ choices: [{ content: ['The sky ', 'is blue.'] }] });
    const chat = await p.client.chat.completions
      .create({
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system', content: 'Answer briefly.' },
          { role: 'user', content: [{ type: 'text', text: 'What colour is the sky?' }] },
        ],
      })
      .withResponse();
    ids.chat = chat.response.headers.get('x-gatelog-log-id')!;

    p.fake.chat({
      choices: [{ toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: ['{"city":', '"Paris"}'] }] }],
    });
    const tool = await p.client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Weather in Paris?' }] })
      .withResponse();
    ids.tool = tool.response.headers.get('x-gatelog-log-id')!;

    // Claude through chat completions (translated), and through its own API (native).
    claude.message({ content: [{ type: 'text', text: ['Bonjour', ' !'] }] });
    const translated = await p.client.chat.completions
      .create({
        model: 'claude-sonnet-4-5',
        messages: [{ role: 'user', content: 'Say hello in French' }],
        max_tokens: 50,
      })
      .withResponse();
    ids.translated = translated.response.headers.get('x-gatelog-log-id')!;

    claude.message({ content: [{ type: 'text', text: ['Ciao'] }] });
    const native = await fetch(`${p.t.baseUrl}/api/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': p.a.key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model: 'claude-sonnet-4-5',
        max_tokens: 50,
        system: [{ type: 'text', text: 'You are Italian.' }],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Say hello in Italian' }] }],
      }),
    });
    assert.equal(native.status, 200, await native.clone().text());
    await native.arrayBuffer();
    ids.native = native.headers.get('x-gatelog-log-id')!;

    // Responses, with input items holding input_text parts.
    p.fake.respond({ text: ['Green'] });
    const response = await p.client.responses
      .create({
        model: 'gpt-4o-mini',
        instructions: 'One word.',
        input: [{ role: 'user', content: [{ type: 'input_text', text: 'Name a colour of leaves' }] }],
      })
      .withResponse();
    ids.response = response.response.headers.get('x-gatelog-log-id')!;

    const embedding = await p.client.embeddings
      .create({ model: 'text-embedding-3-small', input: ['first text', 'second text'] })
      .withResponse();
    ids.embedding = embedding.response.headers.get('x-gatelog-log-id')!;

    const transcription = await p.client.audio.transcriptions
      .create({ file: fs.createReadStream(audioPath('hello.mp3')), model: 'whisper-1' })
      .withResponse();
    ids.transcription = transcription.response.headers.get('x-gatelog-log-id')!;

    // A call the provider refused.
    p.fake.behave({ kind: 'fail', status: 429, body: { error: { message: 'Slow down', type: 'rate_limit' } } }, 1);
    const refused = await fetch(`${p.t.baseUrl}/api/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p.a.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Too fast?' }] }),
    });
    assert.equal(refused.status, 429);
    await refused.arrayBuffer();
    ids.refused = refused.headers.get('x-gatelog-log-id')!;

    const logged = await api(p.t.baseUrl, 'POST', '/api/request-logs/', {
      key: p.a.key,
      body: {
        model: 'gpt-4o',
        prompt_messages: [{ role: 'user', content: [{ type: 'text', text: 'Logged question' }] }],
        completion_message: { role: 'assistant', content: 'Logged answer' },
      },
    });
    assert.equal(logged.status, 201, logged.text);
    ids.logged = logged.body.unique_id;

    const otlp = genAiPayload();
    const spans = await fetch(`${p.t.baseUrl}/api/v1/traces`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p.a.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(otlp.body),
    });
    assert.equal(spans.status, 200, await spans.text());

    for (const id of Object.values(ids)) await logNamedBy(p, id);
    const listed = await rows();
    const shown = (name: string) => {
      const row = listed.get(ids[name]);
      assert.ok(row, `${name} is listed`);
      return [row.input_preview, row.output_preview];
    };
    assert.deepEqual(shown('chat'), ['What colour is the sky?', 'The sky is blue.']);
    assert.deepEqual(shown('tool'), ['Weather in Paris?', 'tool: get_weather({"city":"Paris"})']);
    assert.deepEqual(shown('translated'), ['Say hello in French', 'Bonjour !']);
    assert.deepEqual(shown('native'), ['Say hello in Italian', 'Ciao']);
    assert.deepEqual(shown('response'), ['Name a colour of leaves', 'Green']);
    assert.deepEqual(shown('embedding'), ['first text | second text', '2 inputs × 1536 dims']);
    const [audio, transcript] = shown('transcription');
    assert.match(audio!, /^hello\.mp3 · 1\.3 s$/);
    assert.equal(transcript, 'Hello world.');
    const [tooFast, refusal] = shown('refused');
    assert.equal(tooFast, 'Too fast?');
    assert.match(refusal!, /Slow down/);
    assert.deepEqual(shown('logged'), ['Logged question', 'Logged answer']);

    const bySpan = new Map([...listed.values()].filter((r) => r.span_name).map((r) => [r.span_name, r]));
    assert.equal(bySpan.get('chat gpt-4o-mini')?.input_preview, 'Cancel order 7');
    assert.equal(bySpan.get('chat gpt-4o-mini')?.output_preview, 'Done.');
    assert.equal(bySpan.get('chat legacy')?.input_preview, 'Hello');
    assert.equal(bySpan.get('chat legacy')?.output_preview, 'Bonjour');

    // No row of any kind shows a provider's JSON.
    for (const row of listed.values()) {
      for (const text of [row.input_preview, row.output_preview]) {
        assert.doesNotMatch(text ?? '', /^[{[]"|"id":|chatcmpl-|msg_|"object":/, `${row.log_type}: ${text}`);
      }
    }
  });

  it('reads the previews of a log stored before them from its body', async () => {
    const logged = await api(p.t.baseUrl, 'POST', '/api/request-logs/', {
      key: p.a.key,
      body: {
        model: 'gpt-4o',
        input: [{ role: 'user', content: 'An old question' }],
        output: {
          id: 'chatcmpl-old',
          object: 'chat.completion',
          choices: [{ message: { role: 'assistant', content: 'An old answer' } }],
        },
      },
    });
    assert.equal(logged.status, 201, logged.text);
    await p.t.flush();
    // As a store migrated from before the previews holds it.
    await p.t.db.db
      .updateTable('logs')
      .set({ input_preview: null, output_preview: null })
      .where('unique_id', '=', logged.body.unique_id)
      .execute();
    const row = (await rows()).get(logged.body.unique_id)!;
    assert.deepEqual([row.input_preview, row.output_preview], ['An old question', 'An old answer']);
  });
});
