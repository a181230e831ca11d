/**
 * POST /api/chat/completions streamed: each event passed on as it arrives, the usage and
 * request_breakdown events, tool calls, n > 1, refusals and tokens kept in the log.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import { dataOf, readWholeSse } from '../support/sse.js';
import { assertContentNotKept, client, fake, logOf, near, noting } from '../support/proxied-route.js';
import { OPENAI_PLATFORM_PARAMS as PLATFORM_PARAMS, OPENAI_PRICES as PRICES } from '../support/proxied-route.js';
import { useProxyApp } from '../support/proxied-route.js';
import { hasContent, HELLO, lastSent, MESSAGES, post, sentJson } from './chat-completions-fixtures.js';

describe('POST /api/chat/completions', () => {
  useProxyApp({ GATELOG_UPSTREAM_TIMEOUT_MS: '5000' });

  describe('streaming', () => {
    it('writes each event as it arrives, byte for byte, and asks upstream for the usage it keeps to itself', async () => {
      // The pause between events is long enough to tell one event from the next on a busy machine.
      fake.chat({ eventDelayMs: 150 });
      const res = await post({ model: 'gpt-4o-mini', messages: MESSAGES, stream: true });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
      assert.equal(res.headers.get('cache-control'), 'no-cache');
      assert.equal(res.headers.get('content-length'), null);
      assert.equal(res.headers.get('x-request-id'), `req_${fake.requests.length}`);
      const read = await readWholeSse(res);
      const sent = lastSent().sent;
      assert.deepEqual(
        (sentJson().stream_options as { include_usage?: unknown } | undefined)?.include_usage,
        true,
        'usage is always asked for',
      );
      // Everything the upstream sent but its usage-only event, unchanged and in order.
      const usageOnly = sent.filter((e) => e.data !== '[DONE]' && JSON.parse(e.data).choices.length === 0);
      assert.equal(usageOnly.length, 1);
      assert.deepEqual(
        read.events.map((e) => e.data),
        sent.filter((e) => !usageOnly.includes(e)).map((e) => e.data),
      );
      assert.equal(read.events.at(-1)!.data, '[DONE]');
      // Each event reached the client before the upstream sent the next one: nothing was held back.
      const passed = sent.filter((e) => !usageOnly.includes(e));
      passed.forEach((event, i) => {
        const next = sent[sent.indexOf(event) + 1];
        if (next === undefined) return;
        const late = read.events[i].at - event.at;
        assert.ok(read.events[i].at < next.at, `event ${i} arrived ${late.toFixed(0)} ms after it was sent`);
      });
      const firstContent = read.events.find(hasContent)!;
      assert.ok(firstContent.at < sent.at(-2)!.at - 300, 'the first content arrived well before the last event');

      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.stream, true);
      assert.equal(log.status_code, 200);
      assert.equal(log.failed, false);
      assert.equal(log.prompt_tokens, 19, "the upstream's usage, which the client never saw");
      assert.equal(log.completion_tokens, 4);
      assert.notEqual(log.metadata.usage_source, 'estimated');
      assert.equal(log.completion_message.content, HELLO);
      const output = JSON.parse(log.output);
      assert.equal(output.object, 'chat.completion');
      assert.equal(output.id, dataOf(read.events[0]).id);
      assert.equal(output.choices.length, 1);
      assert.equal(output.choices[0].message.content, HELLO);
      assert.equal(output.choices[0].finish_reason, 'stop');
      assert.equal(output.usage.prompt_tokens, 19);
      assert.ok(log.time_to_first_token >= 0 && log.time_to_first_token <= log.latency);
    });

    it('passes the usage event on when the client asks for it (official client)', async () => {
      const res = await client.chat.completions
        .create({
          model: 'gpt-4o-mini',
          messages: [...MESSAGES],
          stream: true,
          stream_options: { include_usage: true },
        })
        .withResponse();
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of res.data) chunks.push(chunk);
      assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), HELLO);
      const last = chunks.at(-1)!;
      assert.deepEqual(last.choices, []);
      assert.equal(last.usage?.prompt_tokens, 19);
      assert.equal(last.usage?.completion_tokens, 4);
      assert.equal(chunks.length, lastSent().sent.length - 1, 'every event but [DONE]');
      const log = await logOf(res.response.headers.get('x-gatelog-log-id'));
      assert.equal(log.prompt_tokens, 19);
      assert.equal(log.stream, true);

      // And the official client, not asking, sees no usage at all.
      const plain = await client.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [...MESSAGES],
        stream: true,
      });
      const plainChunks: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of plain) plainChunks.push(chunk);
      assert.ok(plainChunks.length > 0);
      assert.ok(plainChunks.every((c) => c.choices.length === 1 && !c.usage));
    });

    it('ends with one request_breakdown event before [DONE], shaped for the official stream helpers', async () => {
      const res = await post({ model: 'gpt-4o-mini', messages: MESSAGES, stream: true, request_breakdown: true });
      const read = await readWholeSse(res);
      assert.equal(read.events.at(-1)!.data, '[DONE]');
      const breakdown = dataOf(read.events.at(-2)!);
      assert.deepEqual(Object.keys(breakdown).sort(), ['choices', 'created', 'id', 'model', 'object']);
      assert.equal(breakdown.id, dataOf(read.events[0]).id, "the stream's id");
      assert.equal(breakdown.object, 'chat.completion.chunk');
      assert.equal(breakdown.model, 'gpt-4o-mini');
      assert.equal(typeof breakdown.created, 'number');
      assert.equal(breakdown.choices.length, 1);
      const { request_breakdown: rb, ...choice } = breakdown.choices[0];
      assert.deepEqual(choice, { index: 0, delta: {}, finish_reason: null });
      assert.equal(rb.stream, true);
      assert.equal(rb.category, 'chat');
      assert.equal(rb.model, 'gpt-4o-mini');
      assert.equal(rb.prompt_tokens, 19);
      assert.equal(rb.completion_tokens, 4);
      near(rb.cost, (19 * PRICES['gpt-4o-mini'].input + 4 * PRICES['gpt-4o-mini'].output) / 1e6, 'cost');
      assert.deepEqual(rb.full_request, sentJson(), 'the request as sent upstream');
      for (const param of PLATFORM_PARAMS) assert.ok(!(param in sentJson()), `${param} stays here`);
      // Before it, the upstream's events but the usage-only one (not asked for).
      const upstream = lastSent().sent.map((e) => e.data);
      assert.deepEqual(
        read.events.slice(0, -2).map((e) => e.data),
        upstream.slice(0, -2),
      );

      // The stream helper assembles the same completion, usage included, the breakdown notwithstanding.
      const stream = client.chat.completions.stream({
        model: 'gpt-4o-mini',
        messages: [...MESSAGES],
        stream_options: { include_usage: true },
        request_breakdown: true,
      } as Parameters<OpenAI['chat']['completions']['stream']>[0]);
      const final = await stream.finalChatCompletion();
      assert.equal(final.choices.length, 1);
      assert.equal(final.choices[0].message.content, HELLO);
      assert.equal(final.choices[0].finish_reason, 'stop');
      assert.equal(final.usage?.prompt_tokens, 19);
      assert.equal(final.usage?.completion_tokens, 4);
    });

    it('assembles parallel tool calls by their index, for the client and in the log', async () => {
      fake.chat({
        choices: [
          {
            toolCalls: [
              { id: 'call_weather', name: 'get_weather', arguments: ['{"ci', 'ty":"Pa', 'ris"}'] },
              { id: 'call_time', name: 'get_time', arguments: ['{"tz":', '"Europe/Paris"}'] },
            ],
          },
        ],
      });
      const tools: OpenAI.ChatCompletionTool[] = [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          },
        },
        {
          type: 'function',
          function: { name: 'get_time', parameters: { type: 'object', properties: { tz: { type: 'string' } } } },
        },
      ];
      const stream = noting.client.chat.completions.stream({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'Weather and time in Paris?' }],
        tools,
        tool_choice: 'auto',
        parallel_tool_calls: true,
      });
      const final = await stream.finalChatCompletion();
      const expected = [
        { id: 'call_weather', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'call_time', type: 'function', function: { name: 'get_time', arguments: '{"tz":"Europe/Paris"}' } },
      ];
      const shape = (calls: { id: string; type: string; function: { name: string; arguments: string } }[]) =>
        calls.map(({ id, type, function: { name, arguments: args } }) => ({
          id,
          type,
          function: { name, arguments: args },
        }));
      assert.deepEqual(shape(final.choices[0].message.tool_calls as never), expected);
      assert.equal(final.choices[0].finish_reason, 'tool_calls');

      const log = await logOf(noting.logId);
      assert.deepEqual(log.tools, tools);
      assert.equal(log.tool_choice, 'auto');
      assert.deepEqual(shape(log.completion_message.tool_calls), expected);
      assert.deepEqual(shape(log.tool_calls), expected);
      const output = JSON.parse(log.output);
      assert.deepEqual(shape(output.choices[0].message.tool_calls), expected);
      assert.equal(output.choices[0].finish_reason, 'tool_calls');
    });

    it('keeps every choice of n: 2 in the output, choice 0 as the completion message', async () => {
      fake.chat({
        choices: [{ content: ['Red', ' apple', '.'] }, { content: ['Green', ' pear'], finishReason: 'length' }],
      });
      const res = await post({ model: 'gpt-4o-mini', messages: MESSAGES, stream: true, n: 2 });
      const read = await readWholeSse(res);
      const indexes = read.events.slice(0, -1).map((e) => dataOf(e).choices[0].index);
      assert.deepEqual(indexes.slice(0, 4), [0, 1, 0, 1], 'the choices arrived interleaved');
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      const output = JSON.parse(log.output);
      assert.deepEqual(
        output.choices.map((c: { index: number; message: { content: string }; finish_reason: string }) => [
          c.index,
          c.message.content,
          c.finish_reason,
        ]),
        [
          [0, 'Red apple.', 'stop'],
          [1, 'Green pear', 'length'],
        ],
      );
      assert.equal(log.completion_message.content, 'Red apple.');
    });

    it('keeps a refusal in the log', async () => {
      const refusal = ["I'm sorry, ", "I can't ", 'help with that.'];
      fake.chat({ choices: [{ refusal }] });
      const stream = noting.client.chat.completions.stream({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'x' }],
      });
      const final = await stream.finalChatCompletion();
      assert.equal(final.choices[0].message.refusal, refusal.join(''));
      const log = await logOf(noting.logId);
      assert.equal(log.completion_message.refusal, refusal.join(''));
      assert.equal(JSON.parse(log.output).choices[0].message.refusal, refusal.join(''));
    });

    it('keeps cached and reasoning tokens, prices cached input lower, and logs the model that answered', async () => {
      const usage = { prompt_tokens: 2000, completion_tokens: 300, cached_tokens: 1200, reasoning_tokens: 100 };
      fake.chat({ usage, model: 'gpt-4o-2024-08-06' });
      const price = PRICES['gpt-4o'];
      const expected = ((2000 - 1200) * price.input + 1200 * price.cached + 300 * price.output) / 1e6;
      const uncached = (2000 * price.input + 300 * price.output) / 1e6;
      for (const stream of [true, false]) {
        const res = await post({ model: 'gpt-4o', messages: MESSAGES, stream });
        await res.text();
        const log = await logOf(res.headers.get('x-gatelog-log-id'));
        const where = stream ? 'streamed' : 'not streamed';
        assert.equal(log.model, 'gpt-4o-2024-08-06', where);
        assert.equal(log.prompt_tokens, 2000, where);
        assert.equal(log.completion_tokens, 300, where);
        const out = JSON.parse(log.output).usage;
        assert.equal(out.prompt_tokens_details.cached_tokens, 1200, where);
        assert.equal(out.completion_tokens_details.reasoning_tokens, 100, where);
        assert.ok(log.cost < uncached, `${where}: ${log.cost} < ${uncached}`);
        near(log.cost, expected, where);
      }
    });

    it('counts tokens locally when the upstream sends no usage, and says so', async () => {
      fake.chat({ usage: null });
      const res = await post({ model: 'gpt-4o-mini', messages: MESSAGES, stream: true });
      const read = await readWholeSse(res);
      assert.equal(read.events.at(-1)!.data, '[DONE]');
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.metadata.usage_source, 'estimated');
      assert.ok(log.prompt_tokens > 0 && log.completion_tokens > 0, `${log.prompt_tokens}/${log.completion_tokens}`);
      assert.ok(log.cost > 0);
    });

    it('times the first token from dispatch, and the rate from there', async () => {
      const delay = 400;
      fake.chat({ firstEventDelayMs: delay, eventDelayMs: 30 });
      const res = await post({ model: 'gpt-4o-mini', messages: MESSAGES, stream: true });
      await readWholeSse(res);
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.stream, true);
      assert.ok(log.time_to_first_token >= delay / 1000, `ttft ${log.time_to_first_token}`);
      assert.ok(log.time_to_first_token <= log.latency, `ttft ${log.time_to_first_token}, latency ${log.latency}`);
      assert.ok(log.latency - log.time_to_first_token >= 0.09, 'the three events after the first took 90 ms');
      assert.ok(log.tokens_per_second > 0);
      const rate = log.completion_tokens / (log.latency - log.time_to_first_token);
      assert.ok(Math.abs(log.tokens_per_second - rate) <= rate * 0.05, `${log.tokens_per_second} vs ${rate}`);
    });

    it('keeps only metrics with disable_log', async () => {
      const res = await post({ model: 'gpt-4o-mini', messages: MESSAGES, stream: true, disable_log: true });
      await readWholeSse(res);
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assertContentNotKept(log);
      assert.equal(log.prompt_tokens, 19);
      assert.equal(log.stream, true);
    });
  });
});
