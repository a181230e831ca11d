/**
 * The response cache and `customer_credentials` (docs/api.md "Response cache"): a call made with its own
 * provider key is answered from the cache only for a call with the same key — an answer fetched with
 * one customer's key is never served to another's, nor to the organization's registered key — and the
 * key itself is not stored in the cache.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type OpenAI from 'openai';
import { settledWrites, storedAfter } from '../support/cache-writes.js';
import { PROVIDER_KEY, type ProxyTestApp, startProxyApp } from '../support/proxy-app.js';

const KEY_ONE = 'sk-customer-one-0000000000000001';
const KEY_TWO = 'sk-customer-two-0000000000000002';

describe('the response cache with customer_credentials', () => {
  let p: ProxyTestApp;
  const run = `credentials ${Date.now()}`;
  /** One call; the cache's answer, and the key the provider saw (null: not called). */
  const call = async (send: () => Promise<{ response: Response }>) => {
    const writes = await settledWrites(p.t.baseUrl);
    const seen = p.fake.requests.length;
    const { response } = await send();
    const cache = response.headers.get('x-gatelog-cache');
    if (cache === 'MISS') await storedAfter(p.t.baseUrl, writes);
    const sent = p.fake.requests.slice(seen);
    assert.ok(sent.length <= 1);
    return { cache, upstreamKey: sent.length === 0 ? null : String(sent[0].headers.authorization) };
  };
  const withKey = (apiKey: string | null): Record<string, unknown> =>
    apiKey === null ? {} : { customer_credentials: { openai: { api_key: apiKey } } };

  before(async () => {
    p = await startProxyApp();
  });
  after(async () => {
    await p?.close();
  });

  it('keeps chat answers apart by the key they were fetched with', async () => {
    const chat = (apiKey: string | null) =>
      call(() =>
        p.client.chat.completions
          .create({
            model: 'gpt-4o-mini',
            messages: [{ role: 'user', content: `${run} the same question` }],
            cache_enabled: true,
            ...withKey(apiKey),
          } as OpenAI.ChatCompletionCreateParamsNonStreaming)
          .withResponse(),
      );
    assert.deepEqual(await chat(KEY_ONE), { cache: 'MISS', upstreamKey: `Bearer ${KEY_ONE}` });
    assert.deepEqual(await chat(KEY_TWO), { cache: 'MISS', upstreamKey: `Bearer ${KEY_TWO}` }, 'another key: a miss');
    assert.deepEqual(
      await chat(null),
      { cache: 'MISS', upstreamKey: `Bearer ${PROVIDER_KEY}` },
      "the organization's key too",
    );
    assert.deepEqual(await chat(KEY_ONE), { cache: 'HIT', upstreamKey: null }, 'the same key: a hit');
    assert.deepEqual(await chat(KEY_TWO), { cache: 'HIT', upstreamKey: null });
    assert.deepEqual(await chat(null), { cache: 'HIT', upstreamKey: null });
  });

  it('keeps embeddings apart input by input the same way', async () => {
    const embed = (apiKey: string | null, input: string[]) =>
      call(() =>
        p.client.embeddings
          .create({
            model: 'text-embedding-3-small',
            input,
            cache_enabled: true,
            ...withKey(apiKey),
          } as OpenAI.EmbeddingCreateParams)
          .withResponse(),
      );
    const input = [`${run} an input`];
    assert.deepEqual(await embed(KEY_ONE, input), { cache: 'MISS', upstreamKey: `Bearer ${KEY_ONE}` });
    assert.deepEqual(await embed(KEY_TWO, input), { cache: 'MISS', upstreamKey: `Bearer ${KEY_TWO}` });
    assert.deepEqual(await embed(KEY_ONE, input), { cache: 'HIT', upstreamKey: null });
    // A call with the second key knowing one of its two inputs sends only the other.
    const partial = await embed(KEY_TWO, [...input, `${run} another input`]);
    assert.deepEqual(partial, { cache: 'PARTIAL', upstreamKey: `Bearer ${KEY_TWO}` });
  });

  it('stores no customer key', async () => {
    const rows = await p.t.db.db.selectFrom('cache_entries').select(['key', 'kind', 'body']).execute();
    assert.ok(rows.length >= 5);
    const text = JSON.stringify(rows);
    for (const key of [KEY_ONE, KEY_TWO, PROVIDER_KEY]) assert.ok(!text.includes(key), 'no provider key in the cache');
  });
});
