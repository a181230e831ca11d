/**
 * What a coding agent (Claude Code) sends besides plain messages, through Anthropic's official client:
 * POST /api/anthropic/v1/messages/count_tokens passed through to the provider the messages route would
 * call (not logged, counted in /metrics, held to the key's scope, allowed models and rate limits);
 * Anthropic's `metadata.user_id` sent upstream while the log keeps the whole `metadata`; and the query
 * (`?beta=true`) and every `anthropic-beta` header reaching the provider as they came.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, beforeEach, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { api, closeInOrder, startApp, type Tenant, type TestApp } from '../support/harness.js';
import {
  COUNT_TOKENS_PATH,
  DEFAULT_COUNT,
  type FakeAnthropic,
  MESSAGES_PATH,
  startFakeAnthropic,
} from '../support/fake-anthropic.js';
import { logWhenWritten } from '../support/proxy-app.js';

const PROVIDER_KEY = 'sk-ant-registered-provider-key-5678';
const MODEL = 'claude-sonnet-4-20250514';
const USER = { role: 'user', content: 'Count me.' } as const;
const ROUTE = '/api/anthropic/v1/messages/count_tokens';

type Json = Record<string, unknown>;

/** The value of the sample `name{labels}` (exactly those labels), 0 when there is none yet. */
function sample(text: string, name: string, labels: Record<string, string>): number {
  for (const line of text.split('\n')) {
    const match = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const got = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    const keys = Object.keys(labels);
    if (keys.length === Object.keys(got).length && keys.every((k) => got[k] === labels[k])) return Number(match[3]);
  }
  return 0;
}

describe("a coding agent's calls on Anthropic's API", () => {
  let fake: FakeAnthropic;
  let t: TestApp;
  let a: Tenant;
  /** Anthropic's client with the tenant's key, noting the URL and headers of what it sent last. */
  let client: Anthropic;
  let sentUrl: URL | null = null;
  let sentHeaders: Headers | null = null;

  const clientOf = (key: string, baseURL = `${t.baseUrl}/api/anthropic`) =>
    new Anthropic({
      apiKey: key,
      baseURL,
      maxRetries: 0,
      fetch: (url: string | URL | Request, init?: RequestInit) => {
        sentUrl = new URL(String(url));
        sentHeaders = new Headers(init?.headers);
        return fetch(url, init);
      },
    });
  let keys = 0;
  /** A key of the tenant's organization with `settings` (scopes, allowed_models, rate_limits). */
  const keyWith = async (settings: Json): Promise<string> => {
    const name = `agent ${++keys}`;
    const made = await api(t.baseUrl, 'POST', '/api/keys/', { key: a.key, body: { name, ...settings } });
    assert.equal(made.status, 201, made.text);
    return made.body.key as string;
  };
  const passedThrough = async (labels: Record<string, string>) => {
    const res = await api(t.baseUrl, 'GET', '/metrics');
    assert.equal(res.status, 200);
    return sample(res.text, 'gatelog_passthrough_calls_total', { route: ROUTE, ...labels });
  };
  /** The refusal `call` met, after checking nothing reached the provider. */
  const refused = async (call: Promise<unknown>) => {
    const sent = fake.requests.length;
    const err = await call.then(
      () => assert.fail('the call was not refused'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof Anthropic.APIError, String(err));
    assert.equal(fake.requests.length, sent, 'nothing was sent to the provider');
    return err;
  };
  /** The organization's logs, once every log acknowledged so far is written. */
  const logs = async (): Promise<Json[]> => {
    await t.flush();
    const res = await api(t.baseUrl, 'POST', '/api/request-logs/list/', { key: a.key, body: {} });
    assert.equal(res.status, 200, res.text);
    return res.body.results as Json[];
  };
  const last = () => fake.requests.at(-1)!;

  before(async () => {
    // Anthropic's refusals as Anthropic makes them: a field it does not know is a 400.
    fake = await startFakeAnthropic();
    t = await startApp({ env: { GATELOG_ANTHROPIC_BASE_URL: fake.baseUrl } });
    a = await t.tenant();
    const registered = await api(t.baseUrl, 'POST', '/api/provider-keys/', {
      key: a.key,
      body: { provider: 'anthropic', api_key: PROVIDER_KEY },
    });
    assert.equal(registered.status, 201, registered.text);
    client = clientOf(a.key);
  });
  beforeEach(() => {
    fake.behave({ kind: 'ok' });
    fake.count();
    sentUrl = null;
    sentHeaders = null;
  });
  after(() => closeInOrder(t, fake));

  describe('POST /api/anthropic/v1/messages/count_tokens', () => {
    it('passes the count through as the provider answered, without a log, counted in /metrics', async () => {
      fake.count(1234);
      const counted = await passedThrough({ provider: 'anthropic', status: '200' });
      const before = (await logs()).length;
      const res = await client.messages
        .countTokens({
          model: MODEL,
          system: 'You are terse.',
          messages: [USER],
          // gatelog's own parameters are taken out: Anthropic's count refuses a field it does not know.
          customer_identifier: 'cust-1',
          metadata: { feature: 'count' },
        } as Anthropic.MessageCountTokensParams)
        .withResponse();
      assert.equal(res.response.status, 200);
      assert.deepEqual(res.data, { input_tokens: 1234 });
      assert.equal(res.request_id, `req_fake${fake.requests.length}`, "Anthropic's request id, under its own name");
      assert.equal(res.response.headers.get('x-gatelog-log-id'), null, 'no log is named');
      const sent = last();
      assert.equal(sent.path, COUNT_TOKENS_PATH);
      assert.equal(sent.query, '');
      assert.equal(sent.headers['x-api-key'], PROVIDER_KEY);
      assert.equal(sent.headers.authorization, undefined, "the caller's key is never forwarded");
      assert.equal(sent.headers['anthropic-version'], sentHeaders!.get('anthropic-version'));
      assert.deepEqual(sent.json, { model: MODEL, system: 'You are terse.', messages: [USER] });

      assert.equal(await passedThrough({ provider: 'anthropic', status: '200' }), counted + 1);
      // A message after it is logged; the count before it made no log.
      await client.messages.create({ model: MODEL, max_tokens: 10, messages: [USER] });
      assert.equal((await logs()).length, before + 1, 'only the message was logged');
    });

    it('answers at every alias, with the gatelog key as x-api-key or as Authorization: Bearer', async () => {
      const atRoot = new Anthropic({ authToken: a.key, baseURL: t.baseUrl, maxRetries: 0 });
      assert.deepEqual(await atRoot.messages.countTokens({ model: MODEL, messages: [USER] }), {
        input_tokens: DEFAULT_COUNT,
      });
      for (const path of [ROUTE, '/v1/anthropic/v1/messages/count_tokens', '/v1/messages/count_tokens']) {
        const sent = fake.requests.length;
        const res = await fetch(`${t.baseUrl}${path}`, {
          method: 'POST',
          headers: { 'x-api-key': a.key, 'content-type': 'application/json' },
          body: JSON.stringify({ model: MODEL, messages: [USER] }),
        });
        assert.equal(res.status, 200, path);
        assert.deepEqual(await res.json(), { input_tokens: DEFAULT_COUNT });
        assert.equal(fake.requests.length, sent + 1);
        assert.equal(last().headers['x-api-key'], PROVIDER_KEY);
      }
      const wrong = await api(t.baseUrl, 'POST', '/api/v1/messages/count_tokens', {
        key: a.key,
        body: { model: MODEL, messages: [USER] },
      });
      assert.equal(wrong.status, 404);
      assert.equal(wrong.body.error.code, 'wrong_base_url');
      assert.match(wrong.body.error.message, /\/api\/anthropic\/v1\/messages\/count_tokens/);
    });

    it("passes the provider's error through with its status, in Anthropic's shape", async () => {
      // Anthropic's count takes no max_tokens: its 400 comes back as it came.
      const err = await client.messages
        .countTokens({ model: MODEL, messages: [USER], max_tokens: 10 } as Anthropic.MessageCountTokensParams)
        .then(
          () => assert.fail('Anthropic refuses it'),
          (e: unknown) => e,
        );
      assert.ok(err instanceof Anthropic.BadRequestError, String(err));
      assert.deepEqual(err.error, JSON.parse(fake.exchanges.at(-1)!.sent[0].text));
      assert.equal(err.headers?.get('x-gatelog-error-source'), 'provider');

      const overloaded = await passedThrough({ provider: 'anthropic', status: '529' });
      fake.behave({ kind: 'error', status: 529, type: 'overloaded_error', message: 'Overloaded' }, 1);
      const res = await fetch(`${t.baseUrl}${ROUTE}`, {
        method: 'POST',
        headers: { 'x-api-key': a.key, 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, messages: [USER] }),
      });
      assert.equal(res.status, 529);
      assert.equal(await res.text(), fake.exchanges.at(-1)!.sent[0].text, "Anthropic's bytes");
      assert.equal(fake.requests.filter((r) => r.path === COUNT_TOKENS_PATH).length > 0, true);
      assert.equal(await passedThrough({ provider: 'anthropic', status: '529' }), overloaded + 1);
    });

    it('refuses a body that is not JSON, or names no model, with a 400 naming the field', async () => {
      const counted = await passedThrough({ provider: '', status: '400' });
      const sent = fake.requests.length;
      const post = (body: string) =>
        fetch(`${t.baseUrl}${ROUTE}`, {
          method: 'POST',
          headers: { 'x-api-key': a.key, 'content-type': 'application/json' },
          body,
        }).then(async (res) => ({ status: res.status, body: (await res.json()) as { error: Json } }));
      const notJson = await post('{"model": ');
      assert.equal(notJson.status, 400);
      assert.equal(notJson.body.error.code, 'invalid_json');
      assert.equal(notJson.body.error.type, 'invalid_request_error');
      const noModel = await post(JSON.stringify({ messages: [USER] }));
      assert.equal(noModel.status, 400);
      assert.equal(noModel.body.error.code, 'invalid_value');
      assert.equal(noModel.body.error.param, 'model');
      const notObject = await post(JSON.stringify([USER]));
      assert.equal(notObject.status, 400);
      assert.equal(notObject.body.error.code, 'invalid_value');
      const sdk = await refused(client.messages.countTokens({ model: '', messages: [USER] }));
      assert.ok(sdk instanceof Anthropic.BadRequestError);
      assert.equal(fake.requests.length, sent, 'nothing was sent to the provider');
      assert.equal(await passedThrough({ provider: '', status: '400' }), counted + 4);
    });

    it('refuses a key without the models scope with 403', async () => {
      const readOnly = clientOf(await keyWith({ scopes: ['read'] }));
      const err = await refused(readOnly.messages.countTokens({ model: MODEL, messages: [USER] }));
      assert.ok(err instanceof Anthropic.PermissionDeniedError, String(err));
      assert.match(JSON.stringify(err.error), /models/);
    });

    it("refuses a model outside the key's allowed models before anything is sent", async () => {
      const haikuOnly = clientOf(await keyWith({ scopes: ['models'], allowed_models: ['claude-haiku*'] }));
      const counted = await passedThrough({ provider: '', status: '403' });
      const err = await refused(haikuOnly.messages.countTokens({ model: MODEL, messages: [USER] }));
      assert.ok(err instanceof Anthropic.PermissionDeniedError, String(err));
      const error = (err.error as { error: Json }).error;
      assert.equal(error.code, 'model_not_allowed');
      assert.equal(error.param, 'model');
      assert.equal(await passedThrough({ provider: '', status: '403' }), counted + 1);
      // An allowed one goes through.
      assert.deepEqual(await haikuOnly.messages.countTokens({ model: 'claude-haiku-4-5', messages: [USER] }), {
        input_tokens: DEFAULT_COUNT,
      });
      assert.equal(last().json!.model, 'claude-haiku-4-5');
    });

    it("counts against the key's requests per minute, as one request", async () => {
      const limited = clientOf(await keyWith({ scopes: ['models'], rate_limits: { requests_per_minute: 1 } }));
      const first = await limited.messages.countTokens({ model: MODEL, messages: [USER] }).withResponse();
      assert.equal(first.response.headers.get('x-ratelimit-limit-requests'), '1');
      assert.equal(first.response.headers.get('x-ratelimit-remaining-requests'), '0');
      const err = await refused(limited.messages.countTokens({ model: MODEL, messages: [USER] }));
      assert.ok(err instanceof Anthropic.RateLimitError, String(err));
      assert.equal((err.error as { error: Json }).error.code, 'rate_limited');
      assert.ok(Number(err.headers?.get('retry-after')) > 0);
    });
  });

  describe('POST /api/anthropic/v1/messages', () => {
    it("sends metadata.user_id upstream as Anthropic's, and keeps the whole metadata on the log", async () => {
      const res = await client.messages
        .create({
          model: MODEL,
          max_tokens: 10,
          messages: [USER],
          metadata: { user_id: 'session-user-7', feature: 'agent' },
        } as Anthropic.MessageCreateParamsNonStreaming)
        .withResponse();
      assert.deepEqual(last().json!.metadata, { user_id: 'session-user-7' });
      const log = await logWhenWritten(t, a, res.response.headers.get('x-gatelog-log-id'));
      assert.equal(log.metadata.user_id, 'session-user-7');
      assert.equal(log.metadata.feature, 'agent');

      // Without user_id, Anthropic gets no metadata at all.
      await client.messages.create({
        model: MODEL,
        max_tokens: 10,
        messages: [USER],
        metadata: { feature: 'agent' },
      } as Anthropic.MessageCreateParamsNonStreaming);
      assert.equal(Object.hasOwn(last().json!, 'metadata'), false);
    });

    it('sends ?beta=true and the anthropic-beta headers upstream as they came, streamed or not', async () => {
      const betas = ['interleaved-thinking-2025-05-14', 'context-management-2025-06-27'];
      const message = await client.beta.messages.create(
        { model: MODEL, max_tokens: 10, messages: [USER], betas },
        { query: { beta: 'true' } },
      );
      assert.equal(message.type, 'message');
      assert.equal(sentUrl!.search, '?beta=true');
      assert.equal(last().path, MESSAGES_PATH);
      assert.equal(last().query, '?beta=true');
      assert.equal(last().headers['anthropic-beta'], sentHeaders!.get('anthropic-beta'));
      assert.equal(last().headers['anthropic-beta'], betas.join(','));

      const streamed = await client.beta.messages
        .stream({ model: MODEL, max_tokens: 10, messages: [USER], betas }, { query: { beta: 'true' } })
        .finalMessage();
      assert.equal(streamed.type, 'message');
      assert.equal(last().query, '?beta=true');
      assert.equal(last().headers['anthropic-beta'], betas.join(','));
      assert.equal(last().json!.stream, true);
    });

    it('sends a query of several parameters byte for byte, and anthropic-beta sent as several headers', async () => {
      const query = '?beta=true&x-note=a%20b&empty=';
      const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const body = JSON.stringify({ model: MODEL, max_tokens: 10, messages: [USER] });
        const url = new URL(`${t.baseUrl}/v1/messages${query}`);
        const req = http.request(url, {
          method: 'POST',
          // Header lines as sent, in order, anthropic-beta twice (an array of them has no header added).
          headers: [
            'host',
            url.host,
            'content-length',
            String(Buffer.byteLength(body)),
            'x-api-key',
            a.key,
            'content-type',
            'application/json',
            'anthropic-version',
            '2023-06-01',
            'anthropic-beta',
            'files-api-2025-04-14',
            'anthropic-beta',
            'prompt-caching-2024-07-31,token-efficient-tools-2025-02-19',
          ],
        });
        req.on('response', (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
        });
        req.on('error', reject);
        req.end(body);
      });
      assert.equal(answer.status, 200, answer.text);
      assert.equal(last().query, query);
      // Every value, in the order sent, as Anthropic reads a list of betas.
      const beta = String(last().headers['anthropic-beta'])
        .split(',')
        .map((b) => b.trim());
      assert.deepEqual(beta, ['files-api-2025-04-14', 'prompt-caching-2024-07-31', 'token-efficient-tools-2025-02-19']);
      assert.equal(last().headers['anthropic-version'], '2023-06-01');
    });

    it('sends ?beta=true and the betas of a count upstream as they came', async () => {
      const counted = await client.beta.messages.countTokens(
        { model: MODEL, messages: [USER], betas: ['context-management-2025-06-27'] },
        { query: { beta: 'true' } },
      );
      assert.deepEqual(counted, { input_tokens: DEFAULT_COUNT });
      assert.equal(last().path, COUNT_TOKENS_PATH);
      assert.equal(last().query, '?beta=true');
      assert.equal(last().headers['anthropic-beta'], sentHeaders!.get('anthropic-beta'));
      assert.match(String(last().headers['anthropic-beta']), /^context-management-2025-06-27,/);
    });
  });
});
