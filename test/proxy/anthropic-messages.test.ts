import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, before, beforeEach, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';
import { DEFAULT_TEXT, DEFAULT_USAGE, type FakeAnthropic, startFakeAnthropic } from '../support/fake-anthropic.js';
import { stallBoundMs } from '../support/responsive.js';

const HELLO = DEFAULT_TEXT.join('');
const PROVIDER_KEY = 'sk-ant-registered-provider-key-1234';
const MODEL = 'claude-sonnet-4-20250514';
const SYSTEM = 'You are terse.';
const USER = { role: 'user', content: 'Say hello.' } as const;
/** Per million tokens, from the price catalog (Anthropic's public prices for Claude Sonnet 4 and 4.5). */
const SONNET = { input: 3, cacheRead: 0.3, cacheWrite: 3.75, cacheWrite1h: 6, output: 15 };
const PLATFORM_PARAMS = [
  'customer_identifier',
  'customer_email',
  'thread_identifier',
  'request_breakdown',
  'customer_credentials',
  'disable_log',
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const near = (actual: number, expected: number, what: string) =>
  assert.ok(
    Math.abs(actual - expected) <= 1e-9 + Math.abs(expected) * 1e-6,
    `${what}: ${actual}, expected ${expected}`,
  );

interface SseRead {
  text: string;
  /** Each event as {event, data (parsed)}, with when it arrived. */
  events: { at: number; event: string; data: Record<string, unknown> }[];
  comments: string[];
  ended: boolean;
  broke: string | null;
}

/** Reads an event stream as it arrives, until it ends, breaks, or `until` says to stop. */
async function readSse(res: Response, until?: (read: SseRead) => boolean): Promise<SseRead> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const read: SseRead = { text: '', events: [], comments: [], ended: false, broke: null };
  let pending = '';
  let name = '';
  for (;;) {
    let chunk: Awaited<ReturnType<typeof reader.read>>;
    try {
      chunk = await reader.read();
    } catch (err) {
      read.broke = String(err);
      return read;
    }
    if (chunk.done) {
      read.ended = true;
      return read;
    }
    const piece = decoder.decode(chunk.value, { stream: true });
    read.text += piece;
    pending += piece;
    for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      if (line.startsWith('event: ')) name = line.slice(7);
      else if (line.startsWith('data: ')) {
        read.events.push({ at: performance.now(), event: name, data: JSON.parse(line.slice(6)) });
        name = '';
      } else if (line.startsWith(':')) read.comments.push(line);
    }
    if (until?.(read)) return read;
  }
}

/** The log an answer names, once written (a stream's log is written when its stream ends). */
async function logWhenWritten(t: TestApp, a: Tenant, id: string | null) {
  assert.ok(id, 'the answer names its log');
  for (let waited = 0; ; waited += 50) {
    await t.flush();
    const res = await api(t.baseUrl, 'GET', `/api/request-logs/${id}/`, { key: a.key });
    if (res.status === 200) return res.body;
    assert.ok(res.status === 404 && waited < 3000, `log ${id}: ${res.status} ${res.text}`);
    await sleep(50);
  }
}

interface Harness {
  fake: FakeAnthropic;
  t: TestApp;
  a: Tenant;
  close(): Promise<void>;
}

async function startHarness(env: Record<string, string> = {}): Promise<Harness> {
  // Fields this fake does not know pass as they would at a newer Anthropic: the route forwards them.
  const fake = await startFakeAnthropic({ unknownFields: 'accept' });
  const t = await startApp({ env: { GATELOG_ANTHROPIC_BASE_URL: fake.baseUrl, ...env } });
  const a = await t.tenant();
  const registered = await api(t.baseUrl, 'POST', '/api/provider-keys/', {
    key: a.key,
    body: { provider: 'anthropic', api_key: PROVIDER_KEY },
  });
  assert.equal(registered.status, 201, registered.text);
  return {
    fake,
    t,
    a,
    close: async () => {
      await t.close();
      await fake.close();
    },
  };
}

describe('POST /api/anthropic/v1/messages', () => {
  let h: Harness;
  let fake: FakeAnthropic;
  let t: TestApp;
  let a: Tenant;
  let client: Anthropic;
  /** What the official client sent, and the log its last answer named (its helpers hide the response). */
  let sentHeaders: Headers | null = null;
  let notedLogId: string | null = null;

  const post = (body: Record<string, unknown>, headers: Record<string, string> = {}, signal?: AbortSignal) =>
    fetch(`${t.baseUrl}/api/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': a.key, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      signal,
    });
  const logOf = (id: string | null) => logWhenWritten(t, a, id);
  const last = () => fake.exchanges.at(-1)!;
  const sentJson = () => last().request.json!;

  before(async () => {
    h = await startHarness({ GATELOG_UPSTREAM_TIMEOUT_MS: '5000' });
    ({ fake, t, a } = h);
    client = new Anthropic({
      apiKey: a.key,
      baseURL: `${t.baseUrl}/api/anthropic`,
      maxRetries: 0,
      fetch: async (url: string | URL | Request, init?: RequestInit) => {
        sentHeaders = new Headers(init?.headers);
        const res = await fetch(url, init);
        notedLogId = res.headers.get('x-gatelog-log-id');
        return res;
      },
    });
  });
  beforeEach(() => {
    fake.behave({ kind: 'ok' });
    fake.message();
    notedLogId = null;
    sentHeaders = null;
  });
  after(() => h.close());

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

  describe('streaming', () => {
    it('passes every event through byte for byte, as it arrives, and logs the message put back together', async () => {
      fake.message({ eventDelayMs: 100 });
      const res = await post({ model: MODEL, max_tokens: 100, system: SYSTEM, messages: [USER], stream: true });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
      assert.equal(res.headers.get('cache-control'), 'no-cache');
      assert.equal(res.headers.get('x-request-id'), `req_fake${fake.exchanges.length}`);
      assert.equal(res.headers.get('request-id'), `req_fake${fake.exchanges.length}`);
      const read = await readSse(res);
      assert.equal(read.broke, null);
      const sent = last().sent;
      assert.equal(read.text, sent.map((e) => e.text).join(''), 'the bytes Anthropic sent, nothing else');
      // Each event reached the client before the next one was sent: nothing was held back.
      read.events.forEach((event, i) => {
        const next = sent[i + 1];
        if (next !== undefined)
          assert.ok(event.at < next.at, `event ${i} (${event.event}) arrived after the next was sent`);
      });

      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.stream, true);
      assert.equal(log.status_code, 200);
      assert.equal(log.model, MODEL);
      assert.deepEqual(log.prompt_messages, [{ role: 'system', content: SYSTEM }, USER]);
      assert.deepEqual(log.completion_message, { role: 'assistant', content: HELLO });
      // message_delta's counts are cumulative: they replace message_start's, never add to them.
      assert.equal(log.prompt_tokens, 21);
      assert.equal(log.completion_tokens, 6);
      near(log.cost, (21 * SONNET.input + 6 * SONNET.output) / 1e6, 'cost');
      const output = JSON.parse(log.output);
      assert.equal(output.id, `msg_fake${fake.exchanges.length}`);
      assert.deepEqual(output.content, [{ type: 'text', text: HELLO }]);
      assert.equal(output.stop_reason, 'end_turn');
      assert.equal(output.usage.output_tokens, 6);
      const firstText = read.events.find((e) => e.event === 'content_block_delta')!;
      assert.ok(firstText.at < read.events.at(-1)!.at - 200, 'the first text arrived well before the end');
      assert.ok(
        log.time_to_first_token >= 0.2,
        `ttft ${log.time_to_first_token}: after message_start, ping, block start`,
      );
      assert.ok(log.time_to_first_token <= log.latency);
      const rate = log.completion_tokens / (log.latency - log.time_to_first_token);
      assert.ok(Math.abs(log.tokens_per_second - rate) <= rate * 0.05, `${log.tokens_per_second} vs ${rate}`);
    });

    it('serves the official client’s stream helpers: text, tool input and thinking, and logs them', async () => {
      fake.message({
        content: [
          { type: 'thinking', thinking: ['The user wants ', 'the weather.'], signature: 'sig-abc' },
          { type: 'text', text: ['Checking', '.'] },
          { type: 'tool_use', id: 'toolu_02', name: 'get_weather', input: ['{"ci', 'ty": "Pa', 'ris"}'] },
        ],
      });
      const stream = client.messages.stream({
        model: MODEL,
        max_tokens: 2000,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
      });
      const texts: string[] = [];
      stream.on('text', (text) => texts.push(text));
      const final = await stream.finalMessage();
      assert.equal(texts.join(''), 'Checking.');
      assert.deepEqual(
        final.content.map((b) => b.type),
        ['thinking', 'text', 'tool_use'],
      );
      assert.deepEqual((final.content[2] as Anthropic.ToolUseBlock).input, { city: 'Paris' });
      assert.equal(final.stop_reason, 'tool_use');
      assert.equal(final.usage.output_tokens, 6);
      assert.equal(sentJson().stream, true);

      const log = await logOf(notedLogId);
      assert.deepEqual(log.completion_message, {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'toolu_02', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        ],
        thinking: 'The user wants the weather.',
      });
      const output = JSON.parse(log.output);
      assert.deepEqual(output.content, [
        { type: 'thinking', thinking: 'The user wants the weather.', signature: 'sig-abc' },
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'toolu_02', name: 'get_weather', input: { city: 'Paris' } },
      ]);
      assert.deepEqual(output.content, JSON.parse(JSON.stringify(final.content)), 'what the client assembled');
    });

    it('counts the four kinds of tokens, and prices cache reads and writes each at its own price', async () => {
      const usage = {
        input_tokens: 1000,
        cache_read_input_tokens: 3000,
        cache_creation_input_tokens: 2000,
        ephemeral_1h_input_tokens: 500,
        output_tokens: 500,
      };
      // Of the 2,000 tokens written to the cache, 500 for an hour (priced higher than for five minutes).
      const expected =
        (1000 * SONNET.input +
          3000 * SONNET.cacheRead +
          1500 * SONNET.cacheWrite +
          500 * SONNET.cacheWrite1h +
          500 * SONNET.output) /
        1e6;
      // Claude Sonnet 4 has one price; 4.5's is tiered by the prompt's size (priced by the catalog's own rules).
      for (const model of [MODEL, 'claude-sonnet-4-5-20250929']) {
        for (const stream of [false, true]) {
          fake.message({ usage, model });
          const res = await post({ model: 'claude-sonnet-4-5', max_tokens: 600, messages: [USER], stream });
          await res.text();
          const log = await logOf(res.headers.get('x-gatelog-log-id'));
          const where = `${model}, stream ${stream}`;
          assert.equal(log.model, model, `${where}: the model that answered`);
          assert.equal(log.prompt_tokens, 6000, where);
          assert.equal(log.completion_tokens, 500, where);
          near(log.cost, expected, where);
          const logged = JSON.parse(log.output).usage;
          assert.equal(logged.cache_read_input_tokens, 3000, where);
          assert.equal(logged.cache_creation_input_tokens, 2000, where);
        }
      }
    });

    it('sends request_breakdown as one event just before message_stop, which the client reads past', async () => {
      const res = await post({
        model: MODEL,
        max_tokens: 100,
        messages: [USER],
        stream: true,
        request_breakdown: true,
      });
      const read = await readSse(res);
      assert.deepEqual(
        read.events.slice(-2).map((e) => e.event),
        ['request_breakdown', 'message_stop'],
      );
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the event is read as the JSON it is
      const { type, request_breakdown: rb } = read.events.at(-2)!.data as { type: string; request_breakdown: any };
      assert.equal(type, 'request_breakdown');
      assert.equal(rb.stream, true);
      assert.equal(rb.model, MODEL);
      assert.equal(rb.prompt_tokens, 21);
      assert.equal(rb.completion_tokens, 6);
      assert.deepEqual(rb.completion_message, { role: 'assistant', content: HELLO });
      assert.deepEqual(rb.full_request, sentJson());
      near(rb.cost, (21 * SONNET.input + 6 * SONNET.output) / 1e6, 'cost');
      // Apart from it, Anthropic's events unchanged.
      const breakdown = read.text.indexOf('event: request_breakdown');
      const end = read.text.indexOf('\n\n', breakdown) + 2;
      assert.equal(
        read.text.slice(0, breakdown) + read.text.slice(end),
        last()
          .sent.map((e) => e.text)
          .join(''),
      );

      const stream = client.messages.stream({
        model: MODEL,
        max_tokens: 100,
        messages: [USER],
        request_breakdown: true,
      } as Anthropic.MessageStreamParams);
      const final = await stream.finalMessage();
      assert.deepEqual(final.content, [{ type: 'text', text: HELLO }]);
      assert.equal(final.usage.output_tokens, 6);
    });

    it('keeps only metrics with disable_log', async () => {
      const res = await post({ model: MODEL, max_tokens: 10, messages: [USER], stream: true, disable_log: true });
      await res.text();
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.input, null);
      assert.equal(log.output, null);
      assert.equal(log.prompt_messages, null);
      assert.equal(log.completion_message, null);
      assert.equal(log.prompt_tokens, 21);
    });

    it('aborts the upstream at once when the client goes away, and logs a 499 with the partial answer', async () => {
      const words = Array.from({ length: 30 }, (_, i) => `w${i} `);
      fake.message({ content: [{ type: 'text', text: words }], eventDelayMs: 60 });
      const controller = new AbortController();
      const res = await post({ model: MODEL, max_tokens: 100, messages: [USER], stream: true }, {}, controller.signal);
      const read = await readSse(res, (r) => r.events.filter((e) => e.event === 'content_block_delta').length >= 2);
      const received = read.events
        .filter((e) => e.event === 'content_block_delta')
        .map((e) => (e.data.delta as { text: string }).text);
      controller.abort();
      const goneAt = performance.now();
      const exchange = last();
      for (let i = 0; i < 1000 && exchange.closedEarlyAt === null; i++) await sleep(10);
      assert.ok(exchange.closedEarlyAt !== null, 'the upstream request was aborted');
      assert.ok(
        // At once: well before the fake's answer would have ended (a busy machine stretches the bound).
        exchange.closedEarlyAt - goneAt < stallBoundMs(100),
        `aborted ${(exchange.closedEarlyAt - goneAt).toFixed(0)} ms later`,
      );

      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.status_code, 499);
      assert.equal(log.failed, true);
      assert.equal(log.error_message, 'client disconnected');
      const partial: string = log.completion_message.content;
      assert.ok(partial.startsWith(received.join('')), `the log holds what was sent: ${partial}`);
      assert.ok(partial.length < words.join('').length, 'and not the whole answer');
      assert.equal(log.prompt_tokens, 21, "message_start's input count");
      assert.ok(log.completion_tokens > 0, 'the output estimated');
      assert.equal(log.metadata.usage_source, 'estimated');
      assert.equal(log.cost, 0);
    });

    for (const kind of ['stream-reset', 'stream-malformed'] as const) {
      it(`ends with Anthropic's error event when the upstream ${kind === 'stream-reset' ? 'resets' : 'sends a malformed event'}`, async () => {
        // message_start, ping, the block's start, "Hello", ", ".
        fake.behave({ kind, after: 5 }, 1);
        const res = await post({ model: MODEL, max_tokens: 100, messages: [USER], stream: true });
        assert.equal(res.status, 200);
        const read = await readSse(res);
        assert.equal(read.broke, null, 'the stream ends cleanly after its error event');
        assert.ok(
          read.text.startsWith(
            last()
              .sent.slice(0, 5)
              .map((e) => e.text)
              .join(''),
          ),
        );
        const error = read.events.at(-1)!;
        assert.equal(error.event, 'error');
        assert.deepEqual(Object.keys(error.data).sort(), ['error', 'type']);
        assert.equal(error.data.type, 'error');
        const { type, code, message } = error.data.error as Record<string, unknown>;
        assert.equal(type, 'api_error');
        assert.equal(code, 'stream_interrupted');
        assert.equal(typeof message, 'string');
        assert.ok(!read.events.some((e) => e.event === 'message_stop'));

        const log = await logOf(res.headers.get('x-gatelog-log-id'));
        assert.equal(log.status_code, 502);
        assert.equal(log.failed, true);
        assert.equal(log.completion_message.content, 'Hello, ');
        assert.equal(log.prompt_tokens, 21);
      });
    }

    it('passes an in-band error event through, which the client raises, and fails the log', async () => {
      fake.behave({ kind: 'stream-error', after: 4 }, 1);
      const res = await post({ model: MODEL, max_tokens: 100, messages: [USER], stream: true });
      const read = await readSse(res);
      assert.equal(
        read.text,
        last()
          .sent.map((e) => e.text)
          .join(''),
        'the error as Anthropic sent it',
      );
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.failed, true);
      assert.equal(log.status_code, 502);
      assert.equal(log.error_message, 'Overloaded');
      assert.equal(log.completion_message.content, 'Hello');

      fake.behave({ kind: 'stream-error', after: 4 }, 1);
      const stream = client.messages.stream({ model: MODEL, max_tokens: 100, messages: [USER] });
      await assert.rejects(
        stream.finalMessage(),
        (err: unknown) => err instanceof Anthropic.APIError && err.type === 'overloaded_error',
      );
    });

    it('retries an overloaded Anthropic (529) before the stream began, and logs the attempt', async () => {
      fake.behave({ kind: 'error', status: 529, type: 'overloaded_error', message: 'Overloaded' }, 1);
      const before = fake.exchanges.length;
      const res = await post({
        model: MODEL,
        max_tokens: 100,
        messages: [USER],
        stream: true,
        retry_params: { retry_enabled: true, num_retries: 1, retry_after: 0.01 },
      });
      assert.equal(res.status, 200);
      const read = await readSse(res);
      assert.equal(
        read.text,
        last()
          .sent.map((e) => e.text)
          .join(''),
      );
      assert.equal(fake.exchanges.length, before + 2);
      assert.ok(!('retry_params' in sentJson()), 'retry_params stays here');
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.status_code, 200);
      assert.deepEqual(
        log.attempts.map((t: { status_code: number; error: string }) => [t.status_code, t.error]),
        [[529, 'Overloaded']],
      );
      assert.equal(log.completion_message.content, HELLO);
    });

    it('passes a non-2xx answer through as JSON, never as a stream', async () => {
      const message = 'Number of requests has exceeded your rate limit';
      fake.behave({ kind: 'error', status: 429, type: 'rate_limit_error', message }, 1);
      const res = await post({ model: MODEL, max_tokens: 100, messages: [USER], stream: true });
      assert.equal(res.status, 429);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      const body = (await res.json()) as { type: string; error: { type: string; message: string } };
      assert.deepEqual(body, JSON.parse(last().sent[0].text));
      assert.deepEqual([body.type, body.error.type, body.error.message], ['error', 'rate_limit_error', message]);
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.status_code, 429);
      assert.equal(log.stream, true);
      assert.equal(log.failed, true);
    });
  });
});

describe('POST /api/anthropic/v1/messages: keepalive and a silent stream', () => {
  let h: Harness;
  const IDLE_MS = 600;

  before(async () => {
    h = await startHarness({ GATELOG_STREAM_IDLE_TIMEOUT_MS: String(IDLE_MS), GATELOG_STREAM_KEEPALIVE_MS: '100' });
  });
  beforeEach(() => {
    h.fake.behave({ kind: 'ok' });
    h.fake.message();
  });
  after(() => h.close());

  it('writes keepalive comments while Anthropic is quiet, and the official client reads past them', async () => {
    h.fake.message({ firstEventDelayMs: 350 });
    const client = new Anthropic({ apiKey: h.a.key, baseURL: `${h.t.baseUrl}/api/anthropic`, maxRetries: 0 });
    const final = await client.messages.stream({ model: MODEL, max_tokens: 10, messages: [USER] }).finalMessage();
    assert.deepEqual(final.content, [{ type: 'text', text: HELLO }]);

    h.fake.message({ firstEventDelayMs: 350 });
    const res = await fetch(`${h.t.baseUrl}/api/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': h.a.key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, max_tokens: 10, messages: [USER], stream: true }),
    });
    const read = await readSse(res);
    assert.ok(read.comments.includes(': keepalive'), read.text.slice(0, 200));
    assert.ok(read.text.indexOf(': keepalive') < read.text.indexOf('event: message_start'));
  });

  it('ends a silent stream with a timeout_error event, and logs a 504 with the partial answer', async () => {
    h.fake.behave({ kind: 'stream-silent', after: 5 }, 1);
    const res = await fetch(`${h.t.baseUrl}/api/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': h.a.key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, max_tokens: 10, messages: [USER], stream: true }),
    });
    const read = await readSse(res);
    assert.equal(read.broke, null);
    const error = read.events.at(-1)!;
    assert.equal(error.event, 'error');
    const { type, code } = error.data.error as Record<string, unknown>;
    assert.equal(type, 'timeout_error');
    assert.equal(code, 'stream_timeout');
    const silentFor = error.at - h.fake.exchanges.at(-1)!.sent.at(-1)!.at;
    assert.ok(silentFor >= IDLE_MS, `the error came ${silentFor.toFixed(0)} ms after the last event`);
    const log = await logWhenWritten(h.t, h.a, res.headers.get('x-gatelog-log-id'));
    assert.equal(log.status_code, 504);
    assert.equal(log.completion_message.content, 'Hello, ');
  });
});
