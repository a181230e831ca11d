/**
 * A provider kind is one folder and one registry line (docs/api.md "Provider kinds"): the `signed` kind
 * of test/fixtures/providers/signed/ — whose calls carry an HMAC of their method, path, date and body —
 * added to gatelog's own kinds by the app that is built with them. Registered through the API with its
 * option, it serves chat completions through the official `openai` client, whole and streamed, from a
 * fake upstream that checks each signature over the bytes it received and refuses a wrong one; each call
 * is logged. Its model family, its option's schema and the routes it does not serve are the registry's.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { z } from 'zod';
import { azureKind } from '../../src/providers/azure/index.js';
import { defineProviderKind } from '../../src/providers/kind.js';
import { BUILT_IN_PROVIDER_KINDS } from '../../src/providers/registry.js';
import { signatureOf, signedKind } from '../fixtures/providers/signed/index.js';
import { chatChunksFor, chatCompletionFor } from '../support/fake-chat-answers.js';
import { api, startApp, type TestApp, startAppWithTenant, closeInOrder } from '../support/harness.js';
import { openAIClientOf, logNamedByAnswer } from '../support/proxy-app.js';

/** The one line that adds the kind. */
const PROVIDER_KINDS = BUILT_IN_PROVIDER_KINDS.with(signedKind);

/** The upstream's keys by name, as the `signed` kind's option names them. */
const UPSTREAM_KEYS: Record<string, string> = { primary: 'signing-secret-0000000001' };

interface SignedUpstream {
  baseUrl: string;
  /** Each call as it arrived: its signature's headers, and whether the signature was right. */
  calls: { path: string; key: string; verified: boolean; body: Record<string, unknown> }[];
  close(): Promise<void>;
}

/** A fake OpenAI-compatible upstream that answers only calls signed with one of its keys. */
async function startSignedUpstream(): Promise<SignedUpstream> {
  const calls: SignedUpstream['calls'] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const key = String(req.headers['x-signed-key'] ?? '');
    const date = String(req.headers['x-signed-date'] ?? '');
    const secret = UPSTREAM_KEYS[key];
    const expected = secret === undefined ? '' : signatureOf(secret, req.method ?? '', req.url ?? '', date, raw);
    const given = String(req.headers['x-signature'] ?? '');
    const verified =
      expected !== '' &&
      given.length === expected.length &&
      crypto.timingSafeEqual(Buffer.from(given), Buffer.from(expected));
    const body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
    calls.push({ path: req.url ?? '', key, verified, body });
    if (!verified || req.headers.authorization !== undefined) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'signature refused', type: 'invalid_request_error', code: null } }));
      return;
    }
    const model = String(body.model);
    const id = `chatcmpl-${crypto.randomUUID()}`;
    if (body.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(chatCompletionFor({}, model, id, 1_700_000_000)));
      return;
    }
    const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const event of chatChunksFor({}, model, id, 1_700_000_000, includeUsage)) res.write(`data: ${event}\n\n`);
    res.end('data: [DONE]\n\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    calls,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('a provider kind added as one folder and one registry line', () => {
  let upstream: SignedUpstream;
  let t: TestApp;
  let key: string;
  let client: OpenAI;

  const register = (body: Record<string, unknown>) => api(t.baseUrl, 'POST', '/api/provider-keys/', { key, body });
  const logOf = (id: string | null) => logNamedByAnswer(t, key, id);

  before(async () => {
    upstream = await startSignedUpstream();
    [t, { key }] = await startAppWithTenant({ providerKinds: PROVIDER_KINDS });
    client = openAIClientOf(t, key);
    // Named as the kind: its kind is the name's, and the kind's model family goes to it.
    const signed = await register({
      provider: 'signed',
      api_key: UPSTREAM_KEYS.primary,
      base_url: upstream.baseUrl,
      key_name: 'primary',
    });
    assert.equal(signed.status, 201, signed.text);
    const wrong = await register({
      provider: 'forged',
      kind: 'signed',
      api_key: 'not-the-signing-secret',
      base_url: upstream.baseUrl,
      key_name: 'primary',
      models: ['forged-*'],
    });
    assert.equal(wrong.status, 201, wrong.text);
  });
  after(() => closeInOrder(t, upstream));

  it('lists the kind after the built-in ones, with its option, and shows the option on its providers', async () => {
    const kinds = await api(t.baseUrl, 'GET', '/api/provider-kinds/', { key });
    assert.deepEqual(
      kinds.body.results.map((k: { kind: string }) => k.kind),
      ['openai', 'anthropic', 'azure', 'signed'],
    );
    const signed = kinds.body.results[3];
    assert.deepEqual([signed.routes, signed.base_url_required], [['chat'], true]);
    assert.deepEqual(signed.options.required, ['key_name']);
    assert.equal(signed.options.properties.key_name.title, 'Key name');

    const providers = await api(t.baseUrl, 'GET', '/api/provider-keys/', { key });
    const byName = new Map(providers.body.results.map((p: Record<string, unknown>) => [p.provider, p]));
    const registered = byName.get('signed') as Record<string, unknown>;
    assert.deepEqual(
      [registered.kind, registered.key_name, registered.api_version],
      ['signed', 'primary', null],
      'every kind’s option is a field; null where the kind has none',
    );
  });

  it('refuses a registration without its required option, or with another kind’s, naming the field', async () => {
    const base = { provider: 'signed-2', kind: 'signed', api_key: 'k-0000000001', base_url: upstream.baseUrl };
    const missing = await register(base);
    assert.equal(missing.status, 400, missing.text);
    assert.equal(missing.body.error.param, 'key_name');
    const foreign = await register({ ...base, key_name: 'primary', api_version: '2024-06-01' });
    assert.equal(foreign.status, 400);
    assert.equal(foreign.body.error.param, 'api_version');
    const stray = await register({ provider: 'openai', api_key: 'sk-0000000001', key_name: 'primary' });
    assert.equal(stray.status, 400);
    assert.equal(stray.body.error.param, 'key_name');
    assert.match(stray.body.error.message, /Signed \(a test kind\)/);
  });

  it('answers a chat completion from the signed upstream, which checked the signature, and logs it', async () => {
    const seen = upstream.calls.length;
    const { data: answer, response } = await client.chat.completions
      .create({ model: 'signed-mini', messages: [{ role: 'user', content: 'Hello' }] })
      .withResponse();
    assert.equal(answer.choices[0].message.content, 'Hello, world!');
    const call = upstream.calls[seen];
    assert.deepEqual([call.path, call.key, call.verified], ['/v1/chat/completions', 'primary', true]);
    assert.equal(call.body.model, 'signed-mini');
    const log = await logOf(response.headers.get('x-gatelog-log-id'));
    assert.deepEqual(
      [log.provider_id, log.model, log.status_code, log.log_type, log.prompt_tokens, log.completion_tokens],
      ['signed', 'signed-mini', 200, 'chat', 19, 4],
    );
  });

  it('signs a streamed call the same way, and logs the stream', async () => {
    const seen = upstream.calls.length;
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'signed/any-model', messages: [{ role: 'user', content: 'Hello' }], stream: true })
      .withResponse();
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    assert.equal(text, 'Hello, world!');
    assert.equal(upstream.calls[seen].verified, true);
    assert.equal(upstream.calls[seen].body.model, 'any-model', 'the provider name is removed upstream');
    const log = await logOf(response.headers.get('x-gatelog-log-id'));
    assert.deepEqual([log.provider_id, log.model, log.stream, log.status_code], ['signed', 'any-model', true, 200]);
  });

  it('passes on the upstream refusing a signature made with the wrong secret, and logs it', async () => {
    const seen = upstream.calls.length;
    const refused = await client.chat.completions
      .create({ model: 'forged-mini', messages: [{ role: 'user', content: 'Hello' }] })
      .withResponse()
      .then(
        () => null,
        (err: unknown) => err,
      );
    assert.ok(refused instanceof OpenAI.APIError && refused.status === 401, String(refused));
    assert.equal(upstream.calls[seen].verified, false);
    const log = await logOf(refused.headers?.get('x-gatelog-log-id') ?? null);
    assert.deepEqual([log.provider_id, log.status_code], ['forged', 401]);
    assert.match(log.error_message, /signature refused/);
  });

  it('is refused by the routes that do not call its kind, naming the model', async () => {
    await assert.rejects(
      client.embeddings.create({ model: 'signed-mini', input: 'a' }),
      (err: InstanceType<typeof OpenAI.APIError>) =>
        err.status === 400 && err.code === 'provider_not_supported' && err.param === 'model',
    );
  });

  it('is unknown to an app built with gatelog’s own kinds only', async () => {
    const plain = await startApp();
    try {
      const tenant = await plain.tenant();
      const res = await api(plain.baseUrl, 'POST', '/api/provider-keys/', {
        key: tenant.key,
        body: { provider: 'vault', kind: 'signed', api_key: 'k-0000000001', base_url: upstream.baseUrl },
      });
      assert.equal(res.status, 400);
      assert.equal(res.body.error.param, 'kind');
      const kinds = await api(plain.baseUrl, 'GET', '/api/provider-kinds/', { key: tenant.key });
      assert.ok(!kinds.body.results.some((k: { kind: string }) => k.kind === 'signed'));
    } finally {
      await plain.close();
    }
  });
});

describe('the registry refuses kinds the API could not tell apart', () => {
  const kind = (name: string, options: z.ZodRawShape) =>
    defineProviderKind({ ...signedKind, name, options: z.object(options) });

  it('refuses a kind listed twice, an option named as a field every provider has, and one option of two meanings', () => {
    assert.throws(() => BUILT_IN_PROVIDER_KINDS.with(kind('azure', {})), /listed twice/);
    assert.throws(() => BUILT_IN_PROVIDER_KINDS.with(kind('odd', { models: z.string() })), /'models' cannot name/);
    assert.throws(() => BUILT_IN_PROVIDER_KINDS.with(kind('odd', { 'api-version': z.string() })), /cannot name/);
    assert.throws(
      () => BUILT_IN_PROVIDER_KINDS.with(kind('odd', { api_version: z.number().optional() })),
      /'azure' and 'odd' define option 'api_version' apart/,
    );
    // The same option, meaning the same: both kinds have it.
    const same = BUILT_IN_PROVIDER_KINDS.with(kind('azure-like', { api_version: azureKind.options.shape.api_version }));
    assert.deepEqual(
      same.optionFields.get('api_version')?.kinds.map((k) => k.name),
      ['azure', 'azure-like'],
    );
  });
});
