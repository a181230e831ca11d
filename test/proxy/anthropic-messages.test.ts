/**
 * POST /api/anthropic/v1/messages answered as JSON: passed through and logged as a chat, the
 * platform parameters removed, the caller's Anthropic headers and key, and who may call the route.
 * Streams: anthropic-messages-streams.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { DEFAULT_USAGE } from '../support/fake-anthropic-answers.js';
import { api } from '../support/harness.js';
import { near } from '../support/proxied-route.js';
import { a, client, fake, HELLO, last, logOf, MODEL, notedLogId, PLATFORM_PARAMS, post } from './anthropic-route.js';
import { PROVIDER_KEY, sentHeaders, sentJson, SONNET, SYSTEM, t, useAnthropicRoute, USER } from './anthropic-route.js';

describe('POST /api/anthropic/v1/messages', () => {
  useAnthropicRoute({ GATELOG_UPSTREAM_TIMEOUT_MS: '5000' });

  it("serves Anthropic's client pointed at gatelog's root (POST /v1/messages), and names that base for a wrong one", async () => {
    const atRoot = new Anthropic({ apiKey: a.key, baseURL: t.baseUrl, maxRetries: 0 });
    const calls = fake.exchanges.length;
    const message = await atRoot.messages.create({ model: MODEL, max_tokens: 100, messages: [USER] });
    assert.equal(fake.exchanges.length, calls + 1, 'proxied to the provider');
    assert.deepEqual(message, JSON.parse(last().sent[0].text));
    const wrong = new Anthropic({ apiKey: a.key, baseURL: `${t.baseUrl}/api`, maxRetries: 0 });
    await assert.rejects(wrong.messages.create({ model: MODEL, max_tokens: 100, messages: [USER] }), (err: unknown) => {
      assert.ok(err instanceof Anthropic.NotFoundError, String(err));
      const text = JSON.stringify(err.error);
      assert.ok(text.includes('wrong_base_url') && text.includes(`${t.baseUrl}/api/anthropic`), text);
      return true;
    });
  });

  describe('not streaming', () => {
    it('passes the message through unchanged, without the platform parameters, and logs it as a chat', async () => {
      const res = await client.messages
        .create({
          model: MODEL,
          max_tokens: 100,
          system: SYSTEM,
          messages: [USER],
          temperature: 0.2,
          metadata: { user_id: 'user-42', feature: 'greeting' },
          customer_identifier: 'cust-1',
          thread_identifier: 'thread-9',
        } as Anthropic.MessageCreateParamsNonStreaming)
        .withResponse();
      assert.equal(res.response.status, 200);
      assert.deepEqual(res.data, JSON.parse(last().sent[0].text), 'the answer is what Anthropic sent');
      // Anthropic's request id, under its own name (which Anthropic's client reads) and as x-request-id.
      assert.equal(res.request_id, `req_fake${fake.exchanges.length}`);
      assert.equal(res.response.headers.get('x-request-id'), `req_fake${fake.exchanges.length}`);
      assert.ok(res.response.headers.get('x-gatelog-request-id'), "gatelog's own id beside it");
      const sent = last().request;
      assert.equal(sent.path, '/v1/messages');
      assert.equal(sent.headers['x-api-key'], PROVIDER_KEY);
      assert.equal(sent.headers.authorization, undefined, "the caller's key is never forwarded");
      // Anthropic's metadata takes only user_id: gatelog's other keys stay on the log.
      assert.deepEqual(sent.json, {
        model: MODEL,
        max_tokens: 100,
        system: SYSTEM,
        messages: [USER],
        temperature: 0.2,
        metadata: { user_id: 'user-42' },
      });

      const log = await logOf(res.response.headers.get('x-gatelog-log-id'));
      assert.equal(log.log_type, 'chat');
      assert.equal(log.log_method, 'inference');
      assert.equal(log.provider_id, 'anthropic');
      assert.equal(log.model, MODEL);
      assert.equal(log.status_code, 200);
      assert.equal(log.failed, false);
      assert.equal(log.stream, false);
      assert.equal(log.time_to_first_token, null);
      assert.deepEqual(log.prompt_messages, [{ role: 'system', content: SYSTEM }, USER]);
      assert.deepEqual(log.completion_message, { role: 'assistant', content: HELLO });
      assert.equal(log.temperature, 0.2);
      assert.equal(log.max_tokens, 100);
      assert.equal(log.customer_identifier, 'cust-1');
      assert.equal(log.thread_identifier, 'thread-9');
      assert.equal(log.metadata.user_id, 'user-42');
      assert.equal(log.metadata.feature, 'greeting');
      assert.equal(log.metadata.usage_source, undefined);
      assert.equal(log.prompt_tokens, DEFAULT_USAGE.input_tokens);
      assert.equal(log.completion_tokens, DEFAULT_USAGE.output_tokens);
      near(log.cost, (21 * SONNET.input + 6 * SONNET.output) / 1e6, 'cost');
      assert.deepEqual(JSON.parse(log.output), res.data, 'the whole message');
    });

    it('adds a top-level request_breakdown, the rest of the answer unchanged', async () => {
      const res = await post({ model: MODEL, max_tokens: 50, messages: [USER], request_breakdown: true });
      assert.equal(res.status, 200);
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the answer is read as the JSON it is
      const body: any = await res.json();
      const { request_breakdown: rb, ...rest } = body;
      assert.deepEqual(rest, JSON.parse(last().sent[0].text));
      assert.equal(rb.stream, false);
      assert.equal(rb.category, 'chat');
      assert.equal(rb.model, MODEL);
      assert.equal(rb.prompt_tokens, 21);
      assert.equal(rb.completion_tokens, 6);
      assert.equal(rb.status_code, 200);
      assert.deepEqual(rb.prompt_messages, [USER]);
      assert.deepEqual(rb.completion_message, { role: 'assistant', content: HELLO });
      assert.deepEqual(rb.full_request, sentJson(), 'the request as sent upstream');
      near(rb.cost, (21 * SONNET.input + 6 * SONNET.output) / 1e6, 'cost');
    });

    it('sends the caller’s anthropic-version and anthropic-beta upstream, and never the caller’s key', async () => {
      await client.messages.create(
        { model: MODEL, max_tokens: 10, messages: [USER] },
        { headers: { 'anthropic-beta': 'prompt-caching-2024-07-31,files-api-2025-04-14' } },
      );
      const version = sentHeaders!.get('anthropic-version');
      assert.ok(version, 'the official client sends a version');
      let headers = last().request.headers;
      assert.equal(headers['anthropic-version'], version);
      assert.equal(headers['anthropic-beta'], 'prompt-caching-2024-07-31,files-api-2025-04-14');
      assert.equal(headers['x-api-key'], PROVIDER_KEY);
      assert.equal(headers.authorization, undefined);

      // Without a version of the caller's, Anthropic's current one; the caller's x-api-key stays here.
      const res = await post({ model: MODEL, max_tokens: 10, messages: [USER] });
      assert.equal(res.status, 200);
      headers = last().request.headers;
      assert.equal(headers['anthropic-version'], '2023-06-01');
      assert.equal(headers['anthropic-beta'], undefined);
      assert.equal(headers['x-api-key'], PROVIDER_KEY);
      assert.ok(!JSON.stringify(headers).includes(a.key), 'the gatelog key never goes upstream');
    });

    it('removes every platform parameter, and uses the caller’s own Anthropic key', async () => {
      const customerKey = 'sk-ant-customer-SECRETSECRET';
      const res = await post({
        model: MODEL,
        max_tokens: 10,
        messages: [USER],
        top_k: 5,
        some_future_field: { nested: [1, 'x', null] },
        metadata: { feature: 'x' },
        customer_identifier: 'c',
        customer_email: 'c@example.com',
        thread_identifier: 't',
        request_breakdown: false,
        disable_log: false,
        customer_credentials: { anthropic: { api_key: customerKey } },
      });
      assert.equal(res.status, 200);
      assert.equal(await res.text(), last().sent[0].text, 'the upstream bytes, unchanged');
      assert.deepEqual(sentJson(), {
        model: MODEL,
        max_tokens: 10,
        messages: [USER],
        top_k: 5,
        some_future_field: { nested: [1, 'x', null] },
      });
      for (const param of [...PLATFORM_PARAMS, 'metadata']) assert.ok(!(param in sentJson()), `${param} stays here`);
      assert.equal(last().request.headers['x-api-key'], customerKey);
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.used_custom_credential, true);
      assert.equal(log.customer_email, 'c@example.com');
      assert.ok(!JSON.stringify(log).includes('SECRETSECRET'), 'the key is never stored');
    });

    it('logs tool use as tool calls in the chat shape, and keeps the tools and tool_choice', async () => {
      fake.message({
        content: [
          { type: 'text', text: ['Let me check.'] },
          { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: ['{"city": ', '"Paris"}'] },
        ],
      });
      const tools = [
        {
          name: 'get_weather',
          description: 'The weather in a city',
          input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
        },
      ];
      const message = await client.messages.create({
        model: MODEL,
        max_tokens: 100,
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools,
        tool_choice: { type: 'auto' },
      });
      assert.equal(message.stop_reason, 'tool_use');
      const log = await logOf(notedLogId);
      assert.deepEqual(log.tools, tools);
      assert.deepEqual(log.tool_choice, { type: 'auto' });
      const expected = [
        { id: 'toolu_01', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      ];
      assert.deepEqual(log.completion_message, { role: 'assistant', content: 'Let me check.', tool_calls: expected });
      assert.deepEqual(log.tool_calls, expected);
    });

    it('passes Anthropic’s 4xx through with its status and body, and logs it failed', async () => {
      // Anthropic refuses a call without max_tokens (gatelog does not check it: Anthropic answers for it).
      const res = await post({ model: MODEL, messages: [USER] });
      assert.equal(res.status, 400);
      assert.equal(last().status, 400);
      assert.equal(await res.text(), last().sent[0].text, 'the error as Anthropic wrote it');
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.status_code, 400);
      assert.equal(log.failed, true);
      assert.equal(log.error_message, 'max_tokens: Field required');
      assert.equal(log.cost, 0);

      fake.behave({ kind: 'error', status: 529, type: 'overloaded_error', message: 'Overloaded' }, 1);
      await assert.rejects(
        client.messages.create({ model: MODEL, max_tokens: 10, messages: [USER] }),
        (err: unknown) => err instanceof Anthropic.APIError && err.status === 529 && err.type === 'overloaded_error',
      );
    });
  });

  describe('authentication and refusals', () => {
    it('takes the gatelog key as x-api-key or as a Bearer key, on this route only', async () => {
      const body = { model: MODEL, max_tokens: 10, messages: [USER] };
      assert.equal((await post(body)).status, 200, 'x-api-key');
      const bearer = await fetch(`${t.baseUrl}/api/anthropic/v1/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.equal(bearer.status, 200, 'Authorization: Bearer');
      const alias = await fetch(`${t.baseUrl}/v1/anthropic/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': a.key, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.equal(alias.status, 200, 'the /v1/ alias');
      // Other routes keep to Authorization: Bearer.
      const list = await api(t.baseUrl, 'GET', '/api/request-logs/', { headers: { 'x-api-key': a.key } });
      assert.equal(list.status, 401);
    });

    it('answers 401 without a key or with a wrong one, and sends nothing upstream', async () => {
      const forwarded = fake.exchanges.length;
      const body = JSON.stringify({ model: MODEL, max_tokens: 10, messages: [USER] });
      const none = await fetch(`${t.baseUrl}/api/anthropic/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      assert.equal(none.status, 401);
      assert.equal(none.headers.get('request-id'), null, 'no provider answered: no request-id of theirs');
      assert.equal(((await none.json()) as { error: { type: string } }).error.type, 'authentication_error');
      const wrong = await post({ model: MODEL, max_tokens: 10, messages: [USER] }, { 'x-api-key': 'gl-wrong-key' });
      assert.equal(wrong.status, 401);
      const stranger = new Anthropic({ apiKey: 'gl-not-a-key', baseURL: `${t.baseUrl}/api/anthropic`, maxRetries: 0 });
      await assert.rejects(
        stranger.messages.create({ model: MODEL, max_tokens: 10, messages: [USER] }),
        (err: unknown) => err instanceof Anthropic.AuthenticationError,
      );
      assert.equal(fake.exchanges.length, forwarded);
    });

    it('refuses a model served by a provider of another kind, and invalid calls, each logged', async () => {
      const forwarded = fake.exchanges.length;
      const cases: [Record<string, unknown>, string, string][] = [
        [{ model: 'gpt-4o', max_tokens: 10, messages: [USER] }, 'model', 'provider_not_supported'],
        [
          { model: MODEL, max_tokens: 10, messages: [USER], fallback_models: ['claude-3-5-haiku-latest', 'gpt-4o'] },
          'fallback_models[1]',
          'provider_not_supported',
        ],
        [{ max_tokens: 10, messages: [USER] }, 'model', 'invalid_value'],
        [{ model: MODEL, max_tokens: 10, messages: [] }, 'messages', 'invalid_value'],
        [{ model: MODEL, max_tokens: 10, messages: [USER, 'hi'] }, 'messages.1', 'invalid_value'],
        [{ model: MODEL, max_tokens: 10, messages: [USER], stream: 'yes' }, 'stream', 'invalid_value'],
        [{ model: MODEL, max_tokens: 10, messages: [USER], metadata: 'x' }, 'metadata', 'invalid_value'],
      ];
      for (const [body, param, code] of cases) {
        const where = JSON.stringify(body);
        const res = await post(body);
        const answer = (await res.json()) as { error: { type: string; param: unknown; code: string } };
        assert.equal(res.status, 400, where);
        assert.equal(answer.error.param, param, where);
        assert.equal(answer.error.code, code, where);
        const log = await logOf(res.headers.get('x-gatelog-log-id'));
        assert.equal(log.status_code, 400, where);
        assert.equal(log.failed, true, where);
      }
      assert.equal(fake.exchanges.length, forwarded, 'nothing went upstream');
    });
  });
});
