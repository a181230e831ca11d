/**
 * Providers by name (docs/api.md "Providers"): several keys per provider with weights, which provider
 * serves a model (`name/model`, registered patterns, built-in families), the prefix removed upstream,
 * provider_id logged as the provider's name, customer_credentials per provider name, and the migration
 * that turned one key per provider into named providers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import OpenAI from 'openai';
import { seal } from '../../src/auth/secret-box.js';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { chooseProvider, pickKey } from '../../src/providers/choose-provider.js';
import { loadProviders, type RegisteredProvider } from '../../src/providers/credentials.js';
import { createTestDatabase } from '../support/database.js';
import { api, closeInOrder, type TestApp } from '../support/harness.js';
import type { FakeUpstream } from '../support/fake-upstream.js';
import { openAIClientOf, registerProviderKey, startAppOnFakeUpstream } from '../support/proxy-app.js';

const provider = (name: string, extra: Partial<RegisteredProvider> = {}): RegisteredProvider => ({
  name,
  kind: 'openai',
  baseUrl: null,
  models: null,
  apiVersion: null,
  keys: [{ keyId: 'default', apiKey: `key-${name}`, weight: 1 }],
  createdAt: 0,
  ...extra,
});

describe('which provider serves a model', () => {
  const groq = provider('groq', { baseUrl: 'http://127.0.0.1:9/openai/v1', models: ['llama-*', 'mixtral-8x7b'] });
  const local = provider('local', { baseUrl: 'http://127.0.0.1:9/v1', models: ['llama-3.1-8b*'] });

  it('takes a provider named before a slash, and removes the name', () => {
    assert.deepEqual(
      [chooseProvider([groq], 'groq/llama-3.1-8b-instant')].map((c) => [c.name, c.model]),
      [['groq', 'llama-3.1-8b-instant']],
    );
    // A built-in name without a registration: its calls need customer_credentials or fail for the key.
    const anthropic = chooseProvider([], 'anthropic/claude-sonnet-4-5');
    assert.deepEqual(
      [anthropic.name, anthropic.kind, anthropic.registered, anthropic.model],
      ['anthropic', 'anthropic', null, 'claude-sonnet-4-5'],
    );
    // A slash in a model's own name (a Hugging Face id on vLLM) is not a provider name.
    const served = provider('vllm', { baseUrl: 'http://127.0.0.1:9/v1', models: ['meta-llama/*'] });
    const hf = chooseProvider([served], 'meta-llama/Llama-3.1-8B-Instruct');
    assert.deepEqual([hf.name, hf.model], ['vllm', 'meta-llama/Llama-3.1-8B-Instruct']);
  });

  it('takes the first registered provider whose models match, then the built-in families', () => {
    assert.equal(chooseProvider([groq, local], 'llama-3.1-8b-instant').name, 'groq');
    assert.equal(chooseProvider([local, groq], 'llama-3.1-8b-instant').name, 'local');
    assert.equal(chooseProvider([groq], 'mixtral-8x7b').name, 'groq');
    // An exact name is exact: a longer model is not served by it.
    assert.throws(() => chooseProvider([groq], 'mixtral-8x7b-32k'), /No provider serves model 'mixtral-8x7b-32k'/);
  });

  it('knows the built-in families', () => {
    for (const model of ['gpt-4o-mini', 'o3-mini', 'o1', 'chatgpt-4o-latest', 'text-embedding-3-small', 'whisper-1'])
      assert.equal(chooseProvider([], model).name, 'openai', model);
    assert.equal(chooseProvider([], 'claude-3-5-haiku-latest').name, 'anthropic');
  });

  it('refuses a model nobody serves, naming it', () => {
    assert.throws(
      () => chooseProvider([groq], 'mistral-large'),
      (err: { status: number; code: string; param: string; message: string }) =>
        err.status === 400 &&
        err.code === 'provider_not_found' &&
        err.param === 'model' &&
        err.message.includes("'mistral-large'"),
    );
  });

  it('keeps an openai provider pointed at its own server serving any model, as before providers had names', () => {
    const compatible = provider('openai', { baseUrl: 'http://127.0.0.1:9/v1' });
    assert.deepEqual(
      [chooseProvider([compatible], 'llama3').name, chooseProvider([compatible], 'llama3').model],
      ['openai', 'llama3'],
    );
    assert.throws(() => chooseProvider([provider('openai')], 'llama3'), /provider_not_found|No provider/);
  });

  it('splits calls among keys by weight (10,000 picks within 3 %)', () => {
    const keys = [
      { id: 'a', weight: 1 },
      { id: 'b', weight: 3 },
      { id: 'c', weight: 6 },
    ];
    const counts: Record<string, number> = { a: 0, b: 0, c: 0 };
    for (let i = 0; i < 10_000; i++) counts[pickKey(keys)!.id]++;
    for (const key of keys) {
      const share = counts[key.id] / 10_000;
      assert.ok(Math.abs(share - key.weight / 10) < 0.03, `${key.id}: ${share}`);
    }
    assert.equal(pickKey([]), null);
  });
});

describe('calls to providers by name', () => {
  let fake: FakeUpstream;
  let t: TestApp;
  let key: string;
  let client: OpenAI;

  before(async () => {
    ({
      fake,
      t,
      a: { key },
    } = await startAppOnFakeUpstream());
    client = openAIClientOf(t, key);
    for (const [keyId, apiKey] of [
      ['first', 'gsk-first-key-000001'],
      ['second', 'gsk-second-key-00002'],
    ]) {
      await registerProviderKey(t, key, {
        provider: 'groq',
        api_key: apiKey,
        key_id: keyId,
        base_url: `${fake.baseUrl}/`,
        models: ['llama-*'],
      });
    }
  });
  after(() => closeInOrder(t, fake));

  const lastLog = async () => {
    await t.flush();
    const res = await api(t.baseUrl, 'GET', '/api/request-logs/list/?page_size=1', { key });
    return res.body.results[0];
  };

  it('lists a provider with its two keys', async () => {
    const res = await api(t.baseUrl, 'GET', '/api/provider-keys/', { key });
    const [groq] = res.body.results;
    assert.equal(groq.provider, 'groq');
    assert.equal(groq.kind, 'openai');
    assert.deepEqual(groq.models, ['llama-*']);
    assert.deepEqual(
      groq.keys.map((k: { key_id: string; api_key_preview: string }) => [k.key_id, k.api_key_preview]),
      [
        ['first', 'gsk...0001'],
        ['second', 'gsk...0002'],
      ],
    );
  });

  it('sends `groq/model` to groq without the prefix, and logs provider_id groq', async () => {
    const seen = fake.chats.length;
    const answer = await client.chat.completions.create({
      model: 'groq/llama-3.1-8b-instant',
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.equal(answer.model, 'llama-3.1-8b-instant');
    const sent = fake.chats[seen].request;
    assert.equal((sent.json as { model: string }).model, 'llama-3.1-8b-instant');
    assert.match(String(sent.headers.authorization), /^Bearer gsk-(first|second)-key/);
    const log = await lastLog();
    assert.equal(log.provider_id, 'groq');
    assert.equal(log.model, 'llama-3.1-8b-instant');
  });

  it('sends a model matching its pattern to groq, spreading the calls over both keys', async () => {
    const seen = fake.chats.length;
    for (let i = 0; i < 30; i++) {
      await client.chat.completions.create({ model: 'llama-3.3-70b', messages: [{ role: 'user', content: 'hi' }] });
    }
    const used = new Set(fake.chats.slice(seen).map((c) => c.request.headers.authorization));
    assert.deepEqual([...used].sort(), ['Bearer gsk-first-key-000001', 'Bearer gsk-second-key-00002']);
    assert.equal((await lastLog()).provider_id, 'groq');
  });

  it('takes customer_credentials by the provider name', async () => {
    const seen = fake.chats.length;
    await client.chat.completions.create({
      model: 'llama-3.3-70b',
      messages: [{ role: 'user', content: 'hi' }],
      // @ts-expect-error a gatelog platform parameter
      customer_credentials: { groq: { api_key: 'gsk-customer-own-key' } },
    });
    assert.equal(fake.chats[seen].request.headers.authorization, 'Bearer gsk-customer-own-key');
    assert.equal((fake.chats[seen].request.json as Record<string, unknown>).customer_credentials, undefined);
    assert.equal((await lastLog()).used_custom_credential, true);
  });

  it('deletes one key, and the other takes every call', async () => {
    const res = await api(t.baseUrl, 'DELETE', '/api/provider-keys/groq/keys/first/', { key });
    assert.equal(res.status, 204);
    const again = await api(t.baseUrl, 'DELETE', '/api/provider-keys/groq/keys/first/', { key });
    assert.equal(again.status, 404);
    const seen = fake.chats.length;
    for (let i = 0; i < 5; i++) {
      await client.chat.completions.create({ model: 'llama-3.3-70b', messages: [{ role: 'user', content: 'hi' }] });
    }
    const used = new Set(fake.chats.slice(seen).map((c) => c.request.headers.authorization));
    assert.deepEqual([...used], ['Bearer gsk-second-key-00002']);
  });

  it('refuses a model no provider serves with provider_not_found, and logs it', async () => {
    await assert.rejects(
      client.chat.completions.create({ model: 'mistral-large', messages: [{ role: 'user', content: 'hi' }] }),
      (err: InstanceType<typeof OpenAI.APIError>) =>
        err.status === 400 && err.code === 'provider_not_found' && err.param === 'model',
    );
    const log = await lastLog();
    assert.equal(log.model, 'mistral-large');
    assert.equal(log.status_code, 400);
  });
});

describe('the migration to named providers', () => {
  it('keeps a key registered before: a provider of kind openai with one key, default', async () => {
    const database = await createTestDatabase();
    const { db } = connect(database.target);
    try {
      await migrateToLatest(db, '0012_export_tokens');
      const secret = Buffer.alloc(32, 7);
      const now = Date.now();
      await sql`insert into organizations (id, name, created_at) values ('org-1', 'one', ${now})`.execute(db);
      const sealed = seal(secret, 'sk-registered-before-1234', 'provider_credentials:org-1:openai');
      await sql`
        insert into provider_credentials
          (organization_id, provider, api_key_encrypted, api_key_preview, base_url, created_at, updated_at)
        values ('org-1', 'openai', ${sealed}, 'sk-...1234', 'http://127.0.0.1:9/v1', ${now}, ${now})
      `.execute(db);
      assert.equal((await migrateToLatest(db))[0], '0013_providers');
      const [registered] = await loadProviders(db, secret, 'org-1');
      assert.equal(registered.name, 'openai');
      assert.equal(registered.kind, 'openai');
      assert.equal(registered.baseUrl, 'http://127.0.0.1:9/v1');
      assert.deepEqual(registered.keys, [{ keyId: 'default', apiKey: 'sk-registered-before-1234', weight: 1 }]);
    } finally {
      await db.destroy();
      await database.drop();
    }
  });
});
