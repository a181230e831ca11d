/**
 * POST /api/responses answered as JSON: passed through and logged (input items as chat messages,
 * prices, background responses), request_breakdown added, and the requests refused. Streams:
 * responses-streams; the stored-response routes: responses-stored.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import { api } from '../support/harness.js';
import { DEFAULT_RESPONSE_USAGE } from '../support/fake-responses.js';
import { PROVIDER_KEY } from '../support/proxy-app.js';
import { a, assertContentNotKept, BREAKDOWN_FIELDS, client, fake, logOf, near } from '../support/proxied-route.js';
import { assertCustomerKeyPassedThrough, assertRateLimitPassedOn, t, useProxyApp } from '../support/proxied-route.js';
import { costOf, HELLO, last, post, sentJson } from './responses-fixtures.js';
import { toolCallTurn } from '../support/chat-messages.js';

describe('POST /api/responses', () => {
  useProxyApp({ GATELOG_UPSTREAM_TIMEOUT_MS: '5000' });

  describe('not streaming', () => {
    it('passes the JSON through unchanged, sends no platform parameter upstream, and logs the call', async () => {
      const res = await client.responses
        .create({
          model: 'gpt-4o-mini',
          instructions: 'You are terse.',
          input: 'Say hello.',
          temperature: 0.3,
          max_output_tokens: 50,
          metadata: { feature: 'greeting' },
          customer_identifier: 'cust-1',
        } as OpenAI.Responses.ResponseCreateParamsNonStreaming)
        .withResponse();
      assert.equal(res.response.status, 200);
      assert.equal(res.data.output_text, HELLO);
      const { output_text: _, ...answer } = res.data;
      assert.deepEqual(answer, JSON.parse(last().sent[0].data), 'the answer is what the upstream sent');
      assert.equal(res.response.headers.get('x-request-id'), `req_${fake.requests.length}`);
      const sent = last().request;
      assert.equal(sent.path, '/v1/responses');
      assert.equal(sent.headers.authorization, `Bearer ${PROVIDER_KEY}`);
      assert.deepEqual(sent.json, {
        model: 'gpt-4o-mini',
        instructions: 'You are terse.',
        input: 'Say hello.',
        temperature: 0.3,
        max_output_tokens: 50,
      });

      const log = await logOf(res.response.headers.get('x-gatelog-log-id'));
      assert.equal(log.log_type, 'response');
      assert.equal(log.log_method, 'inference');
      assert.equal(log.model, 'gpt-4o-mini');
      assert.equal(log.provider_id, 'openai');
      assert.equal(log.status_code, 200);
      assert.equal(log.failed, false);
      assert.equal(log.stream, false);
      assert.equal(log.time_to_first_token, null, 'no first token without a stream');
      assert.deepEqual(log.prompt_messages, [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Say hello.' },
      ]);
      assert.deepEqual(log.completion_message, { role: 'assistant', content: HELLO });
      assert.equal(log.tool_calls, null);
      assert.equal(log.temperature, 0.3);
      assert.equal(log.max_tokens, 50);
      assert.equal(log.customer_identifier, 'cust-1');
      assert.equal(log.metadata.feature, 'greeting');
      assert.notEqual(log.metadata.usage_source, 'estimated');
      assert.equal(log.prompt_tokens, DEFAULT_RESPONSE_USAGE.input_tokens);
      assert.equal(log.completion_tokens, DEFAULT_RESPONSE_USAGE.output_tokens);
      near(log.cost, costOf('gpt-4o-mini', 19, 4), 'cost');
      assert.deepEqual(JSON.parse(log.output), answer, 'the output is the whole response');
    });

    it('is copied into a dataset with its prompt and its output text', async () => {
      const res = await post({ model: 'gpt-4o-mini', instructions: 'Be brief.', input: 'Say hello.' });
      const logId = res.headers.get('x-gatelog-log-id');
      await logOf(logId);
      const dataset = await api(t.baseUrl, 'POST', '/api/datasets/', { key: a.key, body: { name: 'responses' } });
      assert.equal(dataset.status, 201, dataset.text);
      const path = `/api/datasets/${dataset.body.id}/logs/`;
      const added = await api(t.baseUrl, 'POST', path, { key: a.key, body: { log_ids: [logId] } });
      assert.equal(added.status, 201, added.text);
      const list = await api(t.baseUrl, 'GET', `${path}list/`, { key: a.key });
      assert.equal(list.body.results.length, 1);
      assert.equal(list.body.results[0].log_type, 'response');
      assert.equal(list.body.results[0].prompt, 'Say hello.');
      assert.equal(list.body.results[0].completion, HELLO);
    });

    it('adds request_breakdown (stream false), the rest of the answer unchanged', async () => {
      const res = await post({
        model: 'gpt-4o-mini',
        input: 'Say hello.',
        request_breakdown: true,
        metadata: { k: 'v' },
        customer_identifier: 'cust-2',
      });
      assert.equal(res.status, 200);
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the answer is read as the JSON it is
      const body: any = await res.json();
      const { request_breakdown: rb, ...rest } = body;
      assert.deepEqual(rest, JSON.parse(last().sent[0].data));
      for (const field of BREAKDOWN_FIELDS) assert.ok(field in rb, `request_breakdown.${field}`);
      assert.equal(rb.stream, false);
      assert.equal(rb.category, 'response');
      assert.equal(rb.cached, false);
      assert.equal(rb.model, 'gpt-4o-mini');
      assert.equal(rb.prompt_tokens, 19);
      assert.equal(rb.completion_tokens, 4);
      assert.equal(rb.status_code, 200);
      assert.deepEqual(rb.metadata, { k: 'v' });
      assert.deepEqual(rb.prompt_messages, [{ role: 'user', content: 'Say hello.' }]);
      assert.deepEqual(rb.completion_message, { role: 'assistant', content: HELLO });
      near(rb.cost, costOf('gpt-4o-mini', 19, 4), 'cost');
      assert.deepEqual(rb.full_request, { model: 'gpt-4o-mini', input: 'Say hello.' });
      assert.deepEqual(rb.full_request, sentJson(), 'the request as sent upstream');
    });

    it('reads input items as chat messages, function calls as tool calls, and prices cached input', async () => {
      const usage = { input_tokens: 2000, output_tokens: 300, cached_tokens: 1200, reasoning_tokens: 100 };
      fake.respond({
        usage,
        model: 'gpt-4o-2024-08-06',
        functionCalls: [{ callId: 'call_w', name: 'get_weather', arguments: ['{"city":', '"Paris"}'] }],
      });
      const tools = [
        {
          type: 'function',
          name: 'get_weather',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
          strict: false,
        },
      ];
      const input = [
        { role: 'developer', content: 'Use tools.' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris?' }] },
        { type: 'function_call', call_id: 'call_0', name: 'get_time', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_0', output: '12:00' },
        { type: 'reasoning', id: 'rs_1', summary: [] },
      ];
      const res = await post({ model: 'gpt-4o', input, tools, tool_choice: 'auto' });
      assert.equal(res.status, 200, await res.clone().text());
      assert.deepEqual(sentJson(), { model: 'gpt-4o', input, tools, tool_choice: 'auto' });
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.deepEqual(log.prompt_messages, [
        { role: 'developer', content: 'Use tools.' },
        { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
        toolCallTurn('call_0', 'get_time'),
        { role: 'tool', tool_call_id: 'call_0', content: '12:00' },
        { type: 'reasoning', id: 'rs_1', summary: [] },
      ]);
      const call = { id: 'call_w', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };
      assert.deepEqual(log.completion_message, { role: 'assistant', content: null, tool_calls: [call] });
      assert.deepEqual(log.tool_calls, [call]);
      assert.deepEqual(log.tools, tools);
      assert.equal(log.tool_choice, 'auto');
      assert.equal(log.model, 'gpt-4o-2024-08-06', 'the model that answered');
      assert.equal(log.prompt_tokens, 2000);
      assert.equal(log.completion_tokens, 300);
      near(log.cost, costOf('gpt-4o', 2000, 300, 1200), 'cached input at its own price');
      const kept = JSON.parse(log.output).usage;
      assert.equal(kept.input_tokens_details.cached_tokens, 1200);
      assert.equal(kept.output_tokens_details.reasoning_tokens, 100);
    });

    it('uses the caller’s own provider key, never stored', async () => {
      const customerKey = 'sk-customer-key-SECRETSECRET';
      const res = await post({
        model: 'gpt-4o',
        input: 'hi',
        store: false,
        user: 'end-user-7',
        customer_credentials: { openai: { api_key: customerKey } },
        disable_log: false,
      });
      const sent = { model: 'gpt-4o', input: 'hi', store: false, user: 'end-user-7' };
      await assertCustomerKeyPassedThrough(res, last(), sent, customerKey);
    });

    it('passes an upstream error through with its status and body, and logs it failed', async () => {
      const log = await assertRateLimitPassedOn(() => post({ model: 'gpt-4o', input: 'hi' }));
      assert.equal(log.log_type, 'response');
      assert.equal(log.error_message, 'Rate limit reached for gpt-4o');
    });

    it('keeps only metrics with disable_log', async () => {
      const res = await post({ model: 'gpt-4o-mini', input: 'secret words', disable_log: true });
      assert.equal(res.status, 200);
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assertContentNotKept(log);
      assert.equal(log.prompt_tokens, 19);
    });

    it('logs a background response as the call answered it: queued, nothing counted yet', async () => {
      const res = await client.responses
        .create({ model: 'gpt-4o-mini', input: 'Say hello.', background: true })
        .withResponse();
      assert.equal(res.data.status, 'queued');
      const log = await logOf(res.response.headers.get('x-gatelog-log-id'));
      assert.equal(log.status_code, 200);
      assert.equal(log.prompt_tokens, 0);
      assert.equal(log.completion_tokens, 0);
      assert.equal(log.cost, 0);
      assert.equal(log.metadata.usage_source, undefined, 'no estimate of what is still to come');
      assert.equal(JSON.parse(log.output).status, 'queued');
      assert.deepEqual(log.completion_message, { role: 'assistant', content: null });
    });

    it('answers /v1/responses the same', async () => {
      const v1 = new OpenAI({ apiKey: a.key, baseURL: `${t.baseUrl}/v1`, maxRetries: 0 });
      const res = await v1.responses.create({ model: 'gpt-4o-mini', input: 'hi' });
      assert.equal(res.output_text, HELLO);
      assert.equal(last().request.path, '/v1/responses');
    });
  });

  describe('validation', () => {
    it('refuses each invalid request with a 400 naming the field, sends nothing upstream, and logs it', async () => {
      const user = { role: 'user', content: 'hi' };
      const cases: [unknown, string | null][] = [
        [{ input: 'hi' }, 'model'],
        [{ model: '', input: 'hi' }, 'model'],
        [{ model: 42, input: 'hi' }, 'model'],
        [{ model: 'gpt-4o', input: 42 }, 'input'],
        [{ model: 'gpt-4o', input: { role: 'user', content: 'hi' } }, 'input'],
        [{ model: 'gpt-4o', input: [user, 'hi'] }, 'input.1'],
        [{ model: 'gpt-4o', input: [user, null] }, 'input.1'],
        [{ model: 'gpt-4o', input: [{ role: 'robot', content: 'x' }] }, 'input.0.role'],
        [{ model: 'gpt-4o', input: [{ type: 'message', content: 'x' }] }, 'input.0.role'],
        [{ model: 'gpt-4o', input: [{ role: 'user' }] }, 'input.0.content'],
        [{ model: 'gpt-4o', input: [{ type: 7 }] }, 'input.0.type'],
        [{ model: 'gpt-4o', input: 'hi', instructions: ['be brief'] }, 'instructions'],
        [{ model: 'gpt-4o', input: 'hi', stream: 'true' }, 'stream'],
        [{ model: 'gpt-4o', input: 'hi', tools: { type: 'function' } }, 'tools'],
        [{ model: 'gpt-4o', input: 'hi', metadata: 'x' }, 'metadata'],
        [{ model: 'gpt-4o', input: 'hi', customer_identifier: 7 }, 'customer_identifier'],
        [['not', 'an', 'object'], null],
      ];
      const forwarded = fake.requests.length;
      for (const [body, param] of cases) {
        const where = JSON.stringify(body);
        const res = await api(t.baseUrl, 'POST', '/api/responses', { key: a.key, body });
        assert.equal(res.status, 400, where);
        assert.equal(res.body.error.type, 'invalid_request_error', where);
        assert.equal(res.body.error.param, param, where);
        const log = await logOf(res.headers.get('x-gatelog-log-id'));
        assert.equal(log.log_type, 'response', where);
        assert.equal(log.status_code, 400, where);
        assert.equal(log.failed, true, where);
      }
      assert.equal(fake.requests.length, forwarded, 'nothing went upstream');
    });

    it('refuses a model an Anthropic provider serves, and a body that is not JSON', async () => {
      const claude = await api(t.baseUrl, 'POST', '/api/responses', {
        key: a.key,
        body: { model: 'claude-sonnet-4-5', input: 'hi' },
      });
      assert.equal(claude.status, 400);
      assert.equal(claude.body.error.code, 'provider_not_supported');
      assert.equal(claude.body.error.param, 'model');
      const broken = await api(t.baseUrl, 'POST', '/api/responses', { key: a.key, body: '{"model": "gpt-4o",' });
      assert.equal(broken.status, 400);
      const log = await logOf(broken.headers.get('x-gatelog-log-id'));
      assert.equal(log.log_type, 'response');
      assert.equal(log.failed, true);
    });
  });
});
