/**
 * POST /api/chat/completions answered as JSON: passed through, request_breakdown added, errors
 * passed on, and the requests refused before anything goes upstream. Streams: chat-completions-streams
 * and chat-completions-stream-failures.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import { DEFAULT_CHAT_USAGE } from '../support/fake-chat-answers.js';
import { PROVIDER_KEY } from '../support/proxy-app.js';
import { BREAKDOWN_FIELDS, client, fake, logOf, near } from '../support/proxied-route.js';
import { assertCustomerKeyPassedThrough, assertRateLimitPassedOn, useProxyApp } from '../support/proxied-route.js';
import { OPENAI_PRICES as PRICES } from '../support/proxied-route.js';
import { HELLO, lastSent, MESSAGES, post, sentJson } from './chat-completions-fixtures.js';
import { toolCallTurn } from '../support/chat-messages.js';

describe('POST /api/chat/completions', () => {
  useProxyApp({ GATELOG_UPSTREAM_TIMEOUT_MS: '5000' });

  describe('not streaming', () => {
    it('passes the JSON through unchanged, sends no platform parameter upstream, and logs the call', async () => {
      const res = await client.chat.completions
        .create({
          model: 'gpt-4o-mini',
          messages: [...MESSAGES],
          temperature: 0.3,
          max_tokens: 50,
          metadata: { feature: 'greeting' },
          customer_identifier: 'cust-1',
        } as OpenAI.ChatCompletionCreateParamsNonStreaming)
        .withResponse();
      assert.equal(res.response.status, 200);
      assert.deepEqual(res.data, JSON.parse(lastSent().sent[0].data), 'the answer is what the upstream sent');
      assert.equal(res.response.headers.get('x-request-id'), `req_${fake.requests.length}`);
      const sent = lastSent().request;
      assert.equal(sent.path, '/v1/chat/completions');
      assert.equal(sent.headers.authorization, `Bearer ${PROVIDER_KEY}`);
      assert.deepEqual(sent.json, { model: 'gpt-4o-mini', messages: MESSAGES, temperature: 0.3, max_tokens: 50 });

      const log = await logOf(res.response.headers.get('x-gatelog-log-id'));
      assert.equal(log.log_type, 'chat');
      assert.equal(log.log_method, 'inference');
      assert.equal(log.model, 'gpt-4o-mini');
      assert.equal(log.provider_id, 'openai');
      assert.equal(log.status_code, 200);
      assert.equal(log.failed, false);
      assert.equal(log.stream, false);
      assert.equal(log.time_to_first_token, null, 'no first token without a stream');
      assert.deepEqual(log.prompt_messages, MESSAGES);
      assert.equal(log.completion_message.role, 'assistant');
      assert.equal(log.completion_message.content, HELLO);
      assert.equal(log.temperature, 0.3);
      assert.equal(log.max_tokens, 50);
      assert.equal(log.customer_identifier, 'cust-1');
      assert.equal(log.metadata.feature, 'greeting');
      assert.notEqual(log.metadata.usage_source, 'estimated');
      assert.equal(log.prompt_tokens, DEFAULT_CHAT_USAGE.prompt_tokens);
      assert.equal(log.completion_tokens, DEFAULT_CHAT_USAGE.completion_tokens);
      const price = PRICES['gpt-4o-mini'];
      near(log.cost, (19 * price.input + 4 * price.output) / 1e6, 'cost');
      const output = JSON.parse(log.output);
      assert.equal(output.choices[0].message.content, HELLO);
      assert.equal(output.choices[0].finish_reason, 'stop');
      assert.deepEqual(output.usage, res.data.usage);
    });

    it('adds request_breakdown (stream false), the rest of the answer unchanged', async () => {
      const res = await post({
        model: 'gpt-4o-mini',
        messages: MESSAGES,
        request_breakdown: true,
        metadata: { k: 'v' },
        customer_identifier: 'cust-2',
      });
      assert.equal(res.status, 200);
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the answer is read as the JSON it is
      const body: any = await res.json();
      const { request_breakdown: rb, ...rest } = body;
      assert.deepEqual(rest, JSON.parse(lastSent().sent[0].data));
      for (const field of BREAKDOWN_FIELDS) {
        assert.ok(field in rb, `request_breakdown.${field}`);
      }
      assert.equal(rb.stream, false);
      assert.equal(rb.category, 'chat');
      assert.equal(rb.cached, false);
      assert.equal(rb.model, 'gpt-4o-mini');
      assert.equal(rb.prompt_tokens, 19);
      assert.equal(rb.completion_tokens, 4);
      assert.equal(rb.status_code, 200);
      assert.deepEqual(rb.metadata, { k: 'v' });
      assert.deepEqual(rb.scores, {});
      near(rb.cost, (19 * PRICES['gpt-4o-mini'].input + 4 * PRICES['gpt-4o-mini'].output) / 1e6, 'cost');
      assert.deepEqual(rb.full_request, { model: 'gpt-4o-mini', messages: MESSAGES });
      assert.deepEqual(rb.full_request, sentJson(), 'the request as sent upstream');
    });

    it('forwards unknown fields unchanged, byte for byte back, with the caller’s own provider key', async () => {
      const customerKey = 'sk-customer-key-SECRETSECRET';
      const extra = {
        logit_bias: { '50256': -100 },
        some_future_field: { nested: [1, 'x', null, { deep: true }] },
        store: true,
        user: 'end-user-7',
        top_p: 0.5,
      };
      const res = await post({
        model: 'gpt-4o',
        messages: MESSAGES,
        ...extra,
        customer_identifier: 'c',
        metadata: { a: '1' },
        request_breakdown: false,
        customer_credentials: { openai: { api_key: customerKey } },
        disable_log: false,
      });
      await assertCustomerKeyPassedThrough(
        res,
        lastSent(),
        { model: 'gpt-4o', messages: MESSAGES, ...extra },
        customerKey,
      );
    });

    it('passes an upstream error through with its status and body, and logs it failed', async () => {
      await assertRateLimitPassedOn(() => post({ model: 'gpt-4o', messages: MESSAGES }));
    });
  });

  describe('validation', () => {
    it('refuses each invalid request with a 400 naming the field, sends nothing upstream, and logs it', async () => {
      const user = { role: 'user', content: 'hi' };
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ messages: [user] }, /^model$/],
        [{ model: '', messages: [user] }, /^model$/],
        [{ model: 42, messages: [user] }, /^model$/],
        [{ model: 'gpt-4o' }, /^messages$/],
        [{ model: 'gpt-4o', messages: [] }, /^messages$/],
        [{ model: 'gpt-4o', messages: 'hi' }, /^messages$/],
        [{ model: 'gpt-4o', messages: [user, 'hi'] }, /^messages\.1$/],
        [{ model: 'gpt-4o', messages: [user, null] }, /^messages\.1$/],
        [{ model: 'gpt-4o', messages: [{ role: 'robot', content: 'x' }] }, /^messages\.0(\.role)?$/],
        [{ model: 'gpt-4o', messages: [{ content: 'x' }] }, /^messages\.0(\.role)?$/],
        [{ model: 'gpt-4o', messages: [user], stream: 'true' }, /^stream$/],
        [{ model: 'gpt-4o', messages: [user], stream: 1 }, /^stream$/],
        [{ model: 'gpt-4o', messages: [user], n: 0 }, /^n$/],
        [{ model: 'gpt-4o', messages: [user], n: 129 }, /^n$/],
        [{ model: 'gpt-4o', messages: [user], n: 1.5 }, /^n$/],
        [{ model: 'gpt-4o', messages: [user], n: '2' }, /^n$/],
        [{ model: 'gpt-4o', messages: [user], stream_options: { include_usage: true } }, /^stream_options$/],
        [
          { model: 'gpt-4o', messages: [user], stream: false, stream_options: { include_usage: true } },
          /^stream_options$/,
        ],
      ];
      const forwarded = fake.requests.length;
      for (const [body, param] of cases) {
        const where = JSON.stringify(body);
        const res = await post(body);
        const answer = (await res.json()) as { error: { type: string; param: unknown } };
        assert.equal(res.status, 400, where);
        assert.equal(answer.error.type, 'invalid_request_error', where);
        assert.match(String(answer.error.param), param, where);
        const log = await logOf(res.headers.get('x-gatelog-log-id'));
        assert.equal(log.log_type, 'chat', where);
        assert.equal(log.status_code, 400, where);
        assert.equal(log.failed, true, where);
      }
      assert.equal(fake.requests.length, forwarded, 'nothing went upstream');
    });

    it('accepts every known role and n at its bounds', async () => {
      const messages = [
        { role: 'system', content: 's' },
        { role: 'developer', content: 'd' },
        { role: 'user', content: 'u' },
        toolCallTurn('c1', 'f'),
        { role: 'tool', tool_call_id: 'c1', content: '{}' },
        { role: 'function', name: 'f', content: '{}' },
      ];
      for (const n of [1, 128]) {
        const res = await post({ model: 'gpt-4o', messages, n });
        assert.equal(res.status, 200, await res.text());
        assert.deepEqual(sentJson(), { model: 'gpt-4o', messages, n });
      }
    });
  });
});
