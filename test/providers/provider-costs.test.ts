/**
 * What a call to a named provider costs (docs/api.md "Providers", "Costs"): an OpenAI-compatible
 * provider (groq) reached by `groq/model` and by its models' pattern, priced at the catalog's price of
 * that provider's model; Azure OpenAI priced as OpenAI prices the model Azure answered with, cached
 * input at its own price; and a compatible provider's model the catalog does not know logged with cost
 * null and a pricing note, never $0.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { type TestApp, startAppWithTenant, closeInOrder } from '../support/harness.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { registerProviderKey, openAIClientOf, logNamedByAnswer } from '../support/proxy-app.js';

/** Per million tokens, from the price catalog (the providers' public prices). */
const PRICES = {
  // Groq's own prices for the models it serves.
  'llama-3.1-8b-instant': { input: 0.05, output: 0.08 },
  'llama-3.3-70b-versatile': { input: 0.59, output: 0.79 },
  // Azure OpenAI's gpt-4o, the same as OpenAI's.
  'gpt-4o': { input: 2.5, cached: 1.25, output: 10 },
};
/** The catalog's cost is kept to 12 significant digits (binary noise removed): equal to that, exactly. */
const sameCost = (actual: number, expected: number, what: string) =>
  assert.equal(
    Number(actual.toPrecision(12)),
    Number(expected.toPrecision(12)),
    `${what}: cost ${actual}, expected ${expected}`,
  );

describe('costs of calls to named providers', () => {
  let fake: FakeUpstream;
  let t: TestApp;
  let key: string;
  let client: OpenAI;

  const register = (body: Record<string, unknown>) => registerProviderKey(t, key, body);
  const logOf = (id: string | null) => logNamedByAnswer(t, key, id);

  before(async () => {
    fake = await startFakeUpstream();
    // OpenAI's own upstream is nowhere: a call that reached the fake went to the provider named.
    [t, { key }] = await startAppWithTenant({ env: { GATELOG_OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' } });
    client = openAIClientOf(t, key);
    await register({ provider: 'groq', api_key: 'gsk-cost-key-00000001', base_url: fake.baseUrl, models: ['llama-*'] });
    await register({
      provider: 'azure',
      api_key: 'azure-cost-key-000001',
      base_url: new URL(fake.baseUrl).origin,
      api_version: '2024-06-01',
    });
  });
  after(() => closeInOrder(t, fake));

  it('prices `groq/model` at groq’s price for the model', async () => {
    fake.chat({ usage: { prompt_tokens: 1200, completion_tokens: 350 } });
    const { data, response } = await client.chat.completions
      .create({ model: 'groq/llama-3.1-8b-instant', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    assert.equal(data.model, 'llama-3.1-8b-instant');
    assert.equal(fake.chats.at(-1)!.request.headers.authorization, 'Bearer gsk-cost-key-00000001');
    const log = await logOf(response.headers.get('x-gatelog-log-id'));
    assert.equal(log.provider_id, 'groq');
    assert.equal(log.model, 'llama-3.1-8b-instant');
    assert.equal(log.prompt_tokens, 1200);
    assert.equal(log.completion_tokens, 350);
    const price = PRICES['llama-3.1-8b-instant'];
    sameCost(log.cost, (1200 * price.input + 350 * price.output) / 1e6, 'groq by name');
    assert.equal(log.metadata?.pricing, undefined, 'a priced log carries no pricing note');
  });

  it('prices a model groq serves by its pattern, streamed, at groq’s price', async () => {
    fake.chat({ usage: { prompt_tokens: 2000, completion_tokens: 125 } });
    const { data: stream, response } = await client.chat.completions
      .create({
        model: 'llama-3.3-70b-versatile',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
        stream_options: { include_usage: true },
      })
      .withResponse();
    for await (const chunk of stream) void chunk;
    assert.equal(fake.chats.at(-1)!.request.headers.authorization, 'Bearer gsk-cost-key-00000001');
    assert.equal((fake.chats.at(-1)!.request.json as { model: string }).model, 'llama-3.3-70b-versatile');
    const log = await logOf(response.headers.get('x-gatelog-log-id'));
    assert.equal(log.provider_id, 'groq');
    assert.equal(log.stream, true);
    assert.equal(log.prompt_tokens, 2000);
    assert.equal(log.completion_tokens, 125);
    const price = PRICES['llama-3.3-70b-versatile'];
    sameCost(log.cost, (2000 * price.input + 125 * price.output) / 1e6, 'groq by pattern');
  });

  it('prices an Azure deployment as OpenAI prices the model Azure answered with, cached input at its price', async () => {
    fake.chat({
      model: 'gpt-4o-2024-08-06',
      usage: { prompt_tokens: 3000, completion_tokens: 200, cached_tokens: 1024 },
    });
    const price = PRICES['gpt-4o'];
    const expected = ((3000 - 1024) * price.input + 1024 * price.cached + 200 * price.output) / 1e6;
    for (const stream of [false, true]) {
      const res = await fetch(`${t.baseUrl}/api/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'azure/my-gpt4o',
          messages: [{ role: 'user', content: 'hi' }],
          stream,
          ...(stream ? { stream_options: { include_usage: true } } : {}),
        }),
      });
      assert.equal(res.status, 200);
      await res.text();
      const sent = fake.chats.at(-1)!.request;
      assert.equal(sent.url, '/openai/deployments/my-gpt4o/chat/completions?api-version=2024-06-01');
      assert.equal(sent.headers['api-key'], 'azure-cost-key-000001');
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      const where = `azure, stream ${stream}`;
      assert.equal(log.provider_id, 'azure', where);
      assert.equal(log.model, 'gpt-4o-2024-08-06', where);
      assert.equal(log.prompt_tokens, 3000, where);
      assert.equal(log.completion_tokens, 200, where);
      sameCost(log.cost, expected, where);
    }
  });

  it('logs a groq model the catalog has no price for with cost null and a pricing note', async () => {
    fake.chat({ usage: { prompt_tokens: 50, completion_tokens: 10 } });
    const { response } = await client.chat.completions
      .create({ model: 'groq/house-finetune-9b', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    const log = await logOf(response.headers.get('x-gatelog-log-id'));
    assert.equal(log.status_code, 200);
    assert.equal(log.provider_id, 'groq');
    assert.equal(log.model, 'house-finetune-9b');
    assert.equal(log.prompt_tokens, 50);
    assert.equal(log.cost, null, 'unknown, not $0');
    assert.match(log.metadata.pricing, /No price is known for model 'house-finetune-9b'/);
  });
});
