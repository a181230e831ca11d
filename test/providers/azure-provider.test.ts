/**
 * Azure OpenAI as a provider (docs/api.md "Providers"): a call to `azure/{deployment}` goes to the
 * deployment's URL under the resource endpoint, with the provider's api-version (or the default) in the
 * query and the key in an `api-key` header — never as a Bearer token — and is logged under the
 * provider's name with the model Azure answered with.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { DEFAULT_AZURE_API_VERSION } from '../../src/providers/azure/protocol.js';
import { api, type TestApp, startAppWithTenant, closeInOrder } from '../support/harness.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { registerProviderKey, openAIClientOf } from '../support/proxy-app.js';

describe('Azure OpenAI', () => {
  let fake: FakeUpstream;
  let t: TestApp;
  let key: string;
  let client: OpenAI;

  const register = (body: Record<string, unknown>) => registerProviderKey(t, key, body);
  const lastLog = async () => {
    await t.flush();
    const res = await api(t.baseUrl, 'GET', '/api/request-logs/list/?page_size=1', { key });
    return res.body.results[0];
  };

  before(async () => {
    fake = await startFakeUpstream();
    // The resource endpoint is the fake's origin (its OpenAI-shaped API is under /v1).
    // OpenAI's own upstream is somewhere else: a call that reached the fake went by Azure's URL.
    [t, { key }] = await startAppWithTenant({ env: { GATELOG_OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' } });
    client = openAIClientOf(t, key);
    await register({
      provider: 'azure',
      api_key: 'azure-key-0000000001',
      base_url: new URL(fake.baseUrl).origin,
      api_version: '2024-06-01',
    });
    await register({
      provider: 'azure-eu',
      kind: 'azure',
      api_key: 'azure-key-0000000002',
      base_url: `${new URL(fake.baseUrl).origin}/`,
    });
  });
  after(() => closeInOrder(t, fake));

  it('sends a chat call to the deployment with the api-version and the api-key header', async () => {
    fake.chat({ model: 'gpt-4o-2024-08-06' });
    const answer = await client.chat.completions.create({
      model: 'azure/my-gpt4o',
      messages: [{ role: 'user', content: 'Hello' }],
    });
    assert.equal(answer.choices[0].message.content, 'Hello, world!');
    const sent = fake.chats.at(-1)!.request;
    assert.equal(sent.url, '/openai/deployments/my-gpt4o/chat/completions?api-version=2024-06-01');
    assert.equal(sent.headers['api-key'], 'azure-key-0000000001');
    assert.equal(sent.headers.authorization, undefined);
    const log = await lastLog();
    assert.equal(log.provider_id, 'azure');
    assert.equal(log.model, 'gpt-4o-2024-08-06');
    assert.equal(log.status_code, 200);
    assert.ok(log.cost > 0, 'priced as OpenAI prices the model');
  });

  it('streams from a deployment of a provider registered without an api_version (the default)', async () => {
    fake.chat();
    const stream = await client.chat.completions.create({
      model: 'azure-eu/chat-deployment',
      messages: [{ role: 'user', content: 'Hello' }],
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    assert.equal(text, 'Hello, world!');
    const sent = fake.chats.at(-1)!.request;
    assert.equal(
      sent.url,
      `/openai/deployments/chat-deployment/chat/completions?api-version=${DEFAULT_AZURE_API_VERSION}`,
    );
    assert.equal(sent.headers['api-key'], 'azure-key-0000000002');
    assert.equal((await lastLog()).provider_id, 'azure-eu');
  });

  it('sends embeddings to the deployment too', async () => {
    const seen = fake.requests.length;
    const answer = await client.embeddings.create({ model: 'azure/text-embedding-3-small', input: ['a', 'b'] });
    assert.equal(answer.data.length, 2);
    const sent = fake.requests[seen];
    assert.equal(sent.url, '/openai/deployments/text-embedding-3-small/embeddings?api-version=2024-06-01');
    assert.equal(sent.headers['api-key'], 'azure-key-0000000001');
    assert.equal((await lastLog()).provider_id, 'azure');
  });

  it('refuses an azure provider without its resource endpoint, naming base_url', async () => {
    const res = await api(t.baseUrl, 'POST', '/api/provider-keys/', {
      key,
      body: { provider: 'azure-us', kind: 'azure', api_key: 'azure-key-0000000003' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'base_url');
  });
});
