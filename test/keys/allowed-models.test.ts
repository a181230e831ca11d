/**
 * A key's allowed models (docs/api.md "Keys"), through the official openai
 * client: the call's model, each fallback and each model of a load-balance group must be allowed, checked
 * before anything is sent; a refused call is a 403 model_not_allowed naming the model, and one failed log.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { api } from '../support/harness.js';
import { type ProxyTestApp, startProxyApp } from '../support/proxy-app.js';

describe("a key's allowed models", () => {
  let p: ProxyTestApp;
  let client: OpenAI;
  const ask = (model: string, extra: Record<string, unknown> = {}) =>
    client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'hi' }],
      ...extra,
    } as OpenAI.ChatCompletionCreateParamsNonStreaming);
  /** The refusal the call met, after checking nothing reached the provider. */
  const refused = async (call: Promise<unknown>): Promise<InstanceType<typeof OpenAI.PermissionDeniedError>> => {
    const forwarded = p.fake.chats.length;
    const err = await call.then(
      () => assert.fail('the call was not refused'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof OpenAI.PermissionDeniedError, String(err));
    assert.equal(p.fake.chats.length, forwarded, 'nothing was forwarded');
    return err;
  };

  before(async () => {
    p = await startProxyApp();
    const made = await api(p.t.baseUrl, 'POST', '/api/keys/', {
      key: p.a.key,
      body: { name: 'mini only', scopes: ['models', 'read'], allowed_models: ['gpt-4o-mini', 'o3*'] },
    });
    assert.equal(made.status, 201, made.text);
    client = new OpenAI({ apiKey: made.body.key, baseURL: `${p.t.baseUrl}/api`, maxRetries: 0 });
  });
  after(async () => p.close());

  it('forwards a call to an allowed model, by name or by pattern', async () => {
    assert.equal((await ask('gpt-4o-mini')).choices[0].message.content, 'Hello, world!');
    assert.ok((await ask('o3-mini')).choices.length > 0);
  });

  it('refuses a model outside the list, logging the refusal', async () => {
    const err = await refused(ask('gpt-4o'));
    assert.equal(err.code, 'model_not_allowed');
    assert.match(err.message, /'gpt-4o'/);
    assert.equal((err.error as { param?: string }).param, 'model');
    await p.t.flush();
    const logs = await api(p.t.baseUrl, 'POST', '/api/request-logs/list/', {
      key: p.a.key,
      body: { filters: { model: { operator: '', value: ['gpt-4o'] } } },
    });
    assert.equal(logs.status, 200, logs.text);
    assert.equal(logs.body.results.length, 1);
    assert.equal(logs.body.results[0].status_code, 403);
  });

  it('refuses a fallback outside the list before trying the allowed model', async () => {
    const err = await refused(ask('gpt-4o-mini', { fallback_models: ['o3-mini', 'claude-sonnet-4'] }));
    assert.equal(err.code, 'model_not_allowed');
    assert.equal((err.error as { param?: string }).param, 'fallback_models[1]');
  });

  it('refuses a load-balance group with any model outside the list, whichever it would pick', async () => {
    for (let i = 0; i < 4; i++) {
      const err = await refused(
        ask('gpt-4o-mini', {
          load_balance_group: {
            models: [
              { model: 'gpt-4o-mini', weight: 1 },
              { model: 'gpt-4o', weight: 1 },
            ],
          },
        }),
      );
      assert.equal((err.error as { param?: string }).param, 'load_balance_group.models');
    }
  });

  it('allows every model of a provider with provider/*', async () => {
    const made = await api(p.t.baseUrl, 'POST', '/api/keys/', {
      key: p.a.key,
      body: { name: 'openai models', scopes: ['models'], allowed_models: ['openai/*'] },
    });
    const openaiOnly = new OpenAI({ apiKey: made.body.key, baseURL: `${p.t.baseUrl}/api`, maxRetries: 0 });
    const answer = await openaiOnly.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.ok(answer.choices.length > 0);
    const err = await refused(
      openaiOnly.chat.completions.create({ model: 'claude-sonnet-4', messages: [{ role: 'user', content: 'hi' }] }),
    );
    assert.equal(err.code, 'model_not_allowed');
  });
});
