/**
 * GATELOG_CACHE_MAX_MB end to end (docs/api.md "Response cache"): gatelog with a 1 MB cache, filled past
 * it through real calls, removes its oldest answers first and keeps answering the newer ones from the
 * cache. The store measures itself at most every 10 s (src/cache/response-cache.ts), at its first write
 * and then at the first write 10 s later: the test waits those 10 s, idle.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type OpenAI from 'openai';
import { storedAfter, settledWrites } from './support/cache-writes.js';
import { type ProxyTestApp, startProxyApp } from './support/proxy-app.js';

/** 3072 float32s: 12 KB, kept as 16 KB of base64; 64 of them fill 1 MB. */
const MODEL = 'text-embedding-3-large';
const ENTRY_BYTES = 16_384;
/** How often at most the store measures itself (response-cache.ts), and a margin. */
const MAINTENANCE_WAIT_MS = 10_000 + 500;

async function metric(baseUrl: string, name: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const found = new RegExp(`^${name} (\\d+)`, 'm').exec(text);
  assert.ok(found, `${name} in /metrics`);
  return Number(found[1]);
}

describe('a response cache bounded by GATELOG_CACHE_MAX_MB', () => {
  let p: ProxyTestApp;
  const run = `bound ${Date.now()}`;
  const embed = async (input: string[]) => {
    const writes = await settledWrites(p.t.baseUrl);
    const seen = p.fake.requests.length;
    const { data, response } = await p.client.embeddings
      .create({ model: MODEL, input, cache_enabled: true } as OpenAI.EmbeddingCreateParams)
      .withResponse();
    assert.equal(data.data.length, input.length);
    const cache = response.headers.get('x-gatelog-cache');
    if (cache === 'MISS') await storedAfter(p.t.baseUrl, writes);
    return { cache, sent: p.fake.requests.length - seen };
  };

  before(async () => {
    p = await startProxyApp({ GATELOG_CACHE_MAX_MB: '1' });
  });
  after(async () => {
    await p?.close();
  });

  it('removes the oldest answers once past its bound, and keeps the newer ones', async () => {
    // The first write: the store measures itself at once (under its bound), then not for 10 s.
    assert.equal((await embed([`${run} first`])).cache, 'MISS');
    const measuredAt = performance.now();
    // Two calls of 40 inputs (640 KB each): 1.3 MB in all, past the 1 MB bound, the older call first.
    const older = Array.from({ length: 40 }, (_, i) => `${run} older ${i}`);
    const newer = Array.from({ length: 40 }, (_, i) => `${run} newer ${i}`);
    assert.equal((await embed(older)).cache, 'MISS');
    await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal((await embed(newer)).cache, 'MISS');
    assert.equal(await metric(p.t.baseUrl, 'gatelog_cache_evicted_total'), 0, 'not measured again yet');

    // 10 s on, the next write has the store measured: 1.3 MB, so the oldest go until it is under 1 MB —
    // the first call's input and every input of the older call (written at the same instant).
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, measuredAt + MAINTENANCE_WAIT_MS - performance.now())),
    );
    assert.equal((await embed([`${run} last`])).cache, 'MISS');
    for (let waited = 0; (await metric(p.t.baseUrl, 'gatelog_cache_evicted_total')) === 0; waited += 50) {
      assert.ok(waited < 5000, 'the oldest entries were removed');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(await metric(p.t.baseUrl, 'gatelog_cache_evicted_total'), 41);
    const { total } = await p.t.db.db
      .selectFrom('cache_entries')
      .select((eb) => eb.fn.sum<number>('size').as('total'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(total), 41 * ENTRY_BYTES, 'the newer call and the last input are left');

    // The newer call and the last input are still answered from the cache; the older call and the first
    // input go to the provider again, whole (not a partial hit).
    assert.deepEqual(await embed(newer), { cache: 'HIT', sent: 0 });
    assert.deepEqual(await embed([`${run} last`]), { cache: 'HIT', sent: 0 });
    assert.deepEqual(await embed(older), { cache: 'MISS', sent: 1 });
    assert.equal((p.fake.requests.at(-1)!.json as { input: string[] }).input.length, 40);
    assert.deepEqual(await embed([`${run} first`]), { cache: 'MISS', sent: 1 });
  });
});
