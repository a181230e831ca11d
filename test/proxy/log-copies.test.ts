/**
 * What a proxied call's log keeps of its answer and of its prompt (docs/api.md "Size of a log"): one
 * budget (GATELOG_LOG_MAX_BYTES, 1 MB by default) for every copy of each, streamed or not, however many
 * choices, tool calls or names the answer has; the client gets the provider's whole answer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import { api } from '../support/harness.js';
import type { ChatChoiceScript } from '../support/fake-chat-answers.js';
import type { FakeAnthropic } from '../support/fake-anthropic.js';
import { logWhenWritten, type ProxyTestApp, startClaudeProxyApp, startProxyApp } from '../support/proxy-app.js';

const MB = 1024 * 1024;
/** GATELOG_LOG_MAX_BYTES's default: the test runs gatelog as it is configured out of the box. */
const CAP = MB;
/** The log's other fields (ids, model, metadata, the small half of the call), with room to spare. */
const MARGIN = 32 * 1024;
const MESSAGES = [{ role: 'user' as const, content: 'Say a lot.' }];

/** The fields that hold copies of the prompt or of the answer, as GET /api/request-logs/{id} gives them. */
const PROMPT_FIELDS = ['input', 'prompt_messages', 'tools', 'tool_choice'];
const ANSWER_FIELDS = ['output', 'completion_message', 'tool_calls', 'transcript'];

/** The UTF-8 bytes the log stores for these fields (input, output and transcript are stored text). */
function storedBytes(log: Record<string, unknown>, fields: string[]): number {
  let bytes = 0;
  for (const field of fields) {
    const value = log[field];
    if (value === null || value === undefined) continue;
    bytes += Buffer.byteLength(typeof value === 'string' ? value : JSON.stringify(value));
  }
  return bytes;
}

/** Pieces of `size` characters of `text`, as a provider streams a long text. */
const piecesOf = (text: string, size: number) =>
  Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));

const NOTE = /… \[\d+ more characters not logged\]$/;

describe("the log's copy of a long answer and of a long prompt", () => {
  let p: ProxyTestApp;

  before(async () => {
    p = await startProxyApp();
  });
  after(() => p.close());

  /** The stored log an answer names, and the size of its item as the API gives it. */
  async function storedLog(id: string | null) {
    const log = await logWhenWritten(p.t, p.a, id);
    const res = await api(p.t.baseUrl, 'GET', `/api/request-logs/${id}/`, { key: p.a.key });
    assert.equal(res.status, 200);
    return { log, itemBytes: Buffer.byteLength(res.text) };
  }

  /** The answer's copies fit the budget, and so does the whole item once its prompt is counted. */
  function assertWithinCap(log: Record<string, unknown>, itemBytes: number, promptBytes = 0) {
    const answer = storedBytes(log, ANSWER_FIELDS);
    const prompt = storedBytes(log, PROMPT_FIELDS);
    assert.ok(answer <= CAP + 1024, `the answer's copies take ${answer} bytes`);
    assert.ok(prompt <= CAP + 1024, `the prompt's copies take ${prompt} bytes`);
    assert.ok(itemBytes <= CAP + promptBytes + MARGIN, `the log's item takes ${itemBytes} bytes`);
  }

  /** A streamed chat call through the OpenAI client: its chunks put together per choice, and its log's id. */
  async function streamed(body: Omit<OpenAI.ChatCompletionCreateParamsStreaming, 'stream'>) {
    const { data, response } = await p.client.chat.completions.create({ ...body, stream: true }).withResponse();
    const choices = new Map<number, { content: string; names: string[] }>();
    for await (const chunk of data) {
      for (const choice of chunk.choices) {
        const got = choices.get(choice.index) ?? { content: '', names: [] };
        got.content += choice.delta.content ?? '';
        for (const call of choice.delta.tool_calls ?? []) {
          got.names[call.index] = (got.names[call.index] ?? '') + (call.function?.name ?? '');
        }
        choices.set(choice.index, got);
      }
    }
    return { choices, logId: response.headers.get('x-gatelog-log-id') };
  }

  describe('forty choices of 1.1 MB each', () => {
    const text = (i: number) => `${String(i).padStart(3, '0')}${'c'.repeat(1.1 * MB - 3)}`;
    const script = (pieceSize: number): ChatChoiceScript[] =>
      Array.from({ length: 40 }, (_, i) => ({ content: piecesOf(text(i), pieceSize) }));

    function assertChoicesCut(log: Record<string, unknown>) {
      const output = JSON.parse(log.output as string);
      assert.equal(output.choices.length, 40, 'every choice is kept, each cut');
      for (const [i, choice] of output.choices.entries()) {
        assert.ok(choice.message.content.startsWith(String(i).padStart(3, '0')), `choice ${i} keeps its beginning`);
        assert.match(choice.message.content, NOTE);
      }
      const message = log.completion_message as { content: string };
      assert.ok(message.content.startsWith('000c'));
      assert.match(message.content, NOTE);
    }

    it('not streamed: the client gets all 44 MB, the log about 1 MB', async () => {
      p.fake.chat({ choices: script(1.1 * MB) });
      const { data, response } = await p.client.chat.completions
        .create({ model: 'gpt-4o-mini', messages: MESSAGES, n: 40 })
        .withResponse();
      assert.equal(data.choices.length, 40);
      data.choices.forEach((choice, i) => assert.ok(choice.message.content === text(i), `choice ${i} is whole`));
      const { log, itemBytes } = await storedLog(response.headers.get('x-gatelog-log-id'));
      assertWithinCap(log, itemBytes);
      assertChoicesCut(log);
    });

    it('streamed: the client gets all 44 MB, the log about 1 MB', async () => {
      p.fake.chat({ choices: script(256 * 1024) });
      const { choices, logId } = await streamed({ model: 'gpt-4o-mini', messages: MESSAGES, n: 40 });
      assert.equal(choices.size, 40);
      for (const [i, got] of choices) assert.ok(got.content === text(i), `choice ${i} is whole`);
      const { log, itemBytes } = await storedLog(logId);
      assert.equal(log.status_code, 200);
      assertWithinCap(log, itemBytes);
      assertChoicesCut(log);
    });
  });

  describe("a tool call's 30 MB function name", () => {
    const name = `fn_${'n'.repeat(30 * MB)}`;
    const call = (nameAs: string | string[]) => ({ id: 'call_1', name: nameAs, arguments: ['{"city":"Paris"}'] });

    function assertNameCut(log: Record<string, unknown>) {
      const stored = [
        JSON.parse(log.output as string).choices[0].message.tool_calls[0],
        (log.completion_message as { tool_calls: unknown[] }).tool_calls[0],
        (log.tool_calls as unknown[])[0],
      ] as { id: string; function: { name: string; arguments: string } }[];
      for (const tool of stored) {
        assert.equal(tool.id, 'call_1');
        assert.equal(tool.function.arguments, '{"city":"Paris"}', 'what fits is kept whole');
        assert.ok(tool.function.name.startsWith('fn_nnn'));
        assert.match(tool.function.name, NOTE);
      }
    }

    it('not streamed: the client gets the whole name, the log about 1 MB for its three copies', async () => {
      p.fake.chat({ choices: [{ toolCalls: [call(name)] }] });
      const { data, response } = await p.client.chat.completions
        .create({ model: 'gpt-4o-mini', messages: MESSAGES })
        .withResponse();
      assert.ok(data.choices[0].message.tool_calls?.[0].type === 'function');
      assert.ok(data.choices[0].message.tool_calls[0].function.name === name, 'the name is whole');
      const { log, itemBytes } = await storedLog(response.headers.get('x-gatelog-log-id'));
      assertWithinCap(log, itemBytes);
      assertNameCut(log);
    });

    it('streamed (the name in pieces): the client gets the whole name, the log about 1 MB', async () => {
      p.fake.chat({ choices: [{ toolCalls: [call(piecesOf(name, MB))] }] });
      const { choices, logId } = await streamed({ model: 'gpt-4o-mini', messages: MESSAGES });
      assert.ok(choices.get(0)?.names[0] === name, 'the name is whole');
      const { log, itemBytes } = await storedLog(logId);
      assert.equal(log.status_code, 200);
      assertWithinCap(log, itemBytes);
      assertNameCut(log);
    });
  });

  describe('a 50 MB JSON answer', () => {
    // A JSON document as the answer's content (response_format json_object): rows of numbers.
    const row = Array.from({ length: 64 }, (_, i) => Math.round(Math.sin(i) * 1e6) / 1e6);
    const rows = Array.from({ length: Math.ceil((50 * MB) / JSON.stringify(row).length) }, () => row);
    const content = JSON.stringify({ rows });

    function assertContentCut(log: Record<string, unknown>) {
      const stored = JSON.parse(log.output as string).choices[0].message.content as string;
      assert.ok(stored.startsWith('{"rows":[['));
      assert.match(stored, NOTE);
    }

    it('not streamed: the client gets all of it, the log about 1 MB', async () => {
      p.fake.chat({ choices: [{ content: [content] }] });
      const { data, response } = await p.client.chat.completions
        .create({ model: 'gpt-4o-mini', messages: MESSAGES, response_format: { type: 'json_object' } })
        .withResponse();
      assert.ok(data.choices[0].message.content === content, 'the answer is whole');
      const { log, itemBytes } = await storedLog(response.headers.get('x-gatelog-log-id'));
      assertWithinCap(log, itemBytes);
      assertContentCut(log);
    });

    it('streamed: the client gets all of it, the log about 1 MB', async () => {
      p.fake.chat({ choices: [{ content: piecesOf(content, 512 * 1024) }] });
      const { choices, logId } = await streamed({
        model: 'gpt-4o-mini',
        messages: MESSAGES,
        response_format: { type: 'json_object' },
      });
      assert.ok(choices.get(0)?.content === content, 'the answer is whole');
      const { log, itemBytes } = await storedLog(logId);
      assert.equal(log.status_code, 200);
      assertWithinCap(log, itemBytes);
      assertContentCut(log);
    });
  });

  describe('a 19 MB prompt', () => {
    const prompt = `${'p'.repeat(19 * MB)}?`;
    const messages = [{ role: 'user' as const, content: prompt }];

    function assertPromptCut(log: Record<string, unknown>) {
      const stored = [(log.prompt_messages as { content: string }[])[0], JSON.parse(log.input as string)[0]];
      for (const message of stored) {
        assert.equal(message.role, 'user');
        assert.ok(message.content.startsWith('ppp'));
        assert.match(message.content, NOTE);
      }
      assert.equal((log.completion_message as { content: string }).content, 'Hello, world!', 'the answer is whole');
    }

    for (const stream of [false, true]) {
      it(`${stream ? 'streamed' : 'not streamed'}: the provider gets all of it, the log about 1 MB`, async () => {
        p.fake.chat();
        let logId: string | null;
        if (stream) {
          const got = await streamed({ model: 'gpt-4o-mini', messages });
          assert.equal(got.choices.get(0)?.content, 'Hello, world!');
          logId = got.logId;
        } else {
          const { data, response } = await p.client.chat.completions
            .create({ model: 'gpt-4o-mini', messages })
            .withResponse();
          assert.equal(data.choices[0].message.content, 'Hello, world!');
          logId = response.headers.get('x-gatelog-log-id');
        }
        const sent = p.fake.chats.at(-1)!.request.json as { messages: { content: string }[] };
        assert.ok(sent.messages[0].content === prompt, 'the provider got the whole prompt');
        const { log, itemBytes } = await storedLog(logId);
        assert.equal(log.status_code, 200);
        assertWithinCap(log, itemBytes);
        assertPromptCut(log);
      });
    }
  });
});

describe("the same budget on Anthropic's routes, and for the copy the logging API derives", () => {
  let p: ProxyTestApp;
  let claude: FakeAnthropic;

  before(async () => {
    ({ p, claude } = await startClaudeProxyApp());
  });
  after(async () => {
    await p.close();
    await claude.close();
  });

  it("Anthropic's Messages API: a 30 MB tool name reaches the client whole, the log about 1 MB", async () => {
    const name = `fn_${'n'.repeat(30 * MB)}`;
    claude.message({ content: [{ type: 'tool_use', id: 'toolu_1', name, input: ['{"city":"Paris"}'] }] });
    const client = new Anthropic({ apiKey: p.a.key, baseURL: `${p.t.baseUrl}/api/anthropic`, maxRetries: 0 });
    const { data, response } = await client.messages
      .create({ model: 'claude-sonnet-4-20250514', max_tokens: 100, messages: MESSAGES })
      .withResponse();
    assert.ok(data.content[0].type === 'tool_use' && data.content[0].name === name, 'the name is whole');
    const log = await logWhenWritten(p.t, p.a, response.headers.get('x-gatelog-log-id'));
    const answer = storedBytes(log, ANSWER_FIELDS);
    assert.ok(answer <= CAP + 1024, `the answer's copies take ${answer} bytes`);
    const tool = (log.tool_calls as { function: { name: string; arguments: string } }[])[0];
    assert.match(tool.function.name, NOTE);
    assert.equal(tool.function.arguments, '{"city":"Paris"}');
    assert.equal(JSON.parse(log.output as string).content[0].input.city, 'Paris');
  });

  it('Claude through the OpenAI shape, streamed: a 20 MB text reaches the client whole, the log about 1 MB', async () => {
    const text = `t${'x'.repeat(20 * MB)}`;
    claude.message({ content: [{ type: 'text', text: piecesOf(text, MB) }] });
    const stream = await p.client.chat.completions
      .create({ model: 'claude-sonnet-4-20250514', messages: MESSAGES, stream: true })
      .withResponse();
    let content = '';
    for await (const chunk of stream.data) content += chunk.choices[0]?.delta.content ?? '';
    assert.ok(content === text, 'the text is whole');
    const log = await logWhenWritten(p.t, p.a, stream.response.headers.get('x-gatelog-log-id'));
    assert.equal(log.status_code, 200);
    const answer = storedBytes(log, ANSWER_FIELDS);
    assert.ok(answer <= CAP + 1024, `the answer's copies take ${answer} bytes`);
    assert.match((log.completion_message as { content: string }).content, NOTE);
  });

  it('the logging API keeps what its caller sent, and caps the input it derives from prompt_messages', async () => {
    const messages = [{ role: 'user', content: 'q'.repeat(3 * MB) }];
    const res = await api(p.t.baseUrl, 'POST', '/api/request-logs/create/', {
      key: p.a.key,
      body: { model: 'gpt-4o-mini', prompt_messages: messages },
    });
    assert.equal(res.status, 201, res.text.slice(0, 300));
    const log = (await api(p.t.baseUrl, 'GET', `/api/request-logs/${res.body.unique_id}/`, { key: p.a.key })).body;
    assert.deepEqual(log.prompt_messages, messages, 'as sent');
    const input = JSON.parse(log.input);
    assert.equal(input[0].role, 'user');
    assert.match(input[0].content, NOTE);
    assert.ok(Buffer.byteLength(log.input) <= CAP + 1024, `the derived input takes ${log.input.length} bytes`);
  });
});
