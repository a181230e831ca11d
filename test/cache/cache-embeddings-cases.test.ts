/**
 * The response cache for embeddings, in the cases cache/embeddings-cache.test.ts leaves out (docs/api.md
 * "Response cache"): a partial hit asked in base64, its known inputs stored by calls asked as floats and
 * as base64 and its unknown ones scattered among them; two organizations never sharing an input; and a
 * cache that cannot be read nor written still answering, its failures counted in /metrics.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import OpenAI from 'openai';
import { storedAfter, settledWrites } from '../support/cache-writes.js';
import { vectorFor } from '../support/fake-upstream.js';
import { api } from '../support/harness.js';
import { logNamedBy, PROVIDER_KEY, type ProxyTestApp, startProxyApp } from '../support/proxy-app.js';

const MODEL = 'text-embedding-3-small';
const DIMS = 1536;
/** The fake's vectors are float32: compared as the client reads them. */
const f32 = (v: number[]) => v.map((x) => Math.fround(x));
const decode = (b64: string) => {
  const bytes = Buffer.from(b64, 'base64');
  return Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
};
/** A vector as sent: base64 (decoded) or floats. */
const vectorOf = (embedding: unknown) =>
  typeof embedding === 'string' ? decode(embedding) : f32(embedding as number[]);

async function metric(baseUrl: string, name: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const found = new RegExp(`^${name} (\\d+)`, 'm').exec(text);
  assert.ok(found, `${name} in /metrics`);
  return Number(found[1]);
}

/** Embeds `input` with the cache on, through `client`: the answer, its X-Gatelog-Cache and its log. */
async function embed(p: ProxyTestApp, input: string[], extra: Record<string, unknown> = {}, client = p.client) {
  const { data, response } = await client.embeddings
    .create({ model: MODEL, input, cache_enabled: true, ...extra } as OpenAI.EmbeddingCreateParams)
    .withResponse();
  return { data, cache: response.headers.get('x-gatelog-cache'), logId: response.headers.get('x-gatelog-log-id') };
}

describe('embeddings in the response cache: the other cases', () => {
  let p: ProxyTestApp;
  const run = `run ${Date.now()}`;

  before(async () => {
    p = await startProxyApp();
  });
  after(async () => {
    await p?.close();
  });

  it('answers a partial hit in base64: every input in order, only the unknown ones sent and counted', async () => {
    const inputs = Array.from({ length: 100 }, (_, i) => `${run} partial ${i}`);
    // Ten unknown inputs scattered through the call (7, 17, …, 97): order matters at every step.
    const unknown = inputs.map((_, i) => i).filter((i) => i % 10 === 7);
    const known = inputs.map((_, i) => i).filter((i) => i % 10 !== 7);
    // The known ones stored by two earlier calls, one asked as floats and one as base64.
    const asFloats = known.filter((i) => i < 50);
    const asBase64 = known.filter((i) => i >= 50);
    /** What the provider gave each input: its vector in the call that sent it (the fake's is by position). */
    const expected = new Map<number, number[]>();
    const writes = await settledWrites(p.t.baseUrl);
    const floats = await embed(
      p,
      asFloats.map((i) => inputs[i]),
      { encoding_format: 'float' },
    );
    assert.equal(floats.cache, 'MISS');
    asFloats.forEach((input, at) => {
      assert.deepEqual(f32(floats.data.data[at].embedding), f32(vectorFor(at, DIMS)));
      expected.set(input, f32(vectorFor(at, DIMS)));
    });
    await storedAfter(p.t.baseUrl, writes);
    const more = await settledWrites(p.t.baseUrl);
    const base64 = await embed(
      p,
      asBase64.map((i) => inputs[i]),
      { encoding_format: 'base64' },
    );
    assert.equal(base64.cache, 'MISS');
    asBase64.forEach((input, at) => {
      assert.deepEqual(vectorOf(base64.data.data[at].embedding), f32(vectorFor(at, DIMS)));
      expected.set(input, f32(vectorFor(at, DIMS)));
    });
    await storedAfter(p.t.baseUrl, more);
    await settledWrites(p.t.baseUrl);
    unknown.forEach((input, at) => expected.set(input, f32(vectorFor(at, DIMS))));

    const seen = p.fake.requests.length;
    const partial = await embed(p, inputs, { encoding_format: 'base64' });
    assert.equal(partial.cache, 'PARTIAL');
    assert.equal(p.fake.requests.length, seen + 1, 'one call upstream');
    const sent = p.fake.requests.at(-1)!.json as { input: string[]; encoding_format?: string };
    assert.deepEqual(
      sent.input,
      unknown.map((i) => inputs[i]),
      'only the ten unknown inputs, in order',
    );
    assert.equal(sent.encoding_format, 'base64');
    assert.equal(partial.data.data.length, 100);
    partial.data.data.forEach((item, i) => {
      assert.equal(item.index, i);
      assert.equal(typeof item.embedding, 'string', `input ${i} in base64, as asked`);
      assert.deepEqual(vectorOf(item.embedding), expected.get(i), `input ${i}`);
    });
    // Usage and cost count the ten sent (the fake counts 2 tokens an input; $0.02 per million).
    assert.deepEqual(partial.data.usage, { prompt_tokens: 20, total_tokens: 20 });
    const log = await logNamedBy(p, partial.logId);
    assert.equal(log.prompt_tokens, 20);
    assert.ok(Math.abs(log.cost - (20 * 0.02) / 1e6) < 1e-12, `cost ${log.cost}`);
    assert.equal(log.embedding_count, 100);
    // Partly from the provider: not a hit (a hit costs 0, and this call paid for ten inputs).
    assert.equal(log.cache_hit, false);
    assert.equal(log.status_code, 200);

    // Every input is known now, the ten included: a hit, in base64 as asked.
    await settledWrites(p.t.baseUrl);
    const hit = await embed(p, inputs, { encoding_format: 'base64' });
    assert.equal(hit.cache, 'HIT');
    assert.equal(p.fake.requests.length, seen + 1);
    hit.data.data.forEach((item, i) => assert.deepEqual(vectorOf(item.embedding), expected.get(i), `input ${i}`));
    const hitLog = await logNamedBy(p, hit.logId);
    assert.equal(hitLog.cache_hit, true);
    assert.equal(hitLog.cost, 0);
  });

  it('never shares an input between two organizations', async () => {
    const inputs = [`${run} shared 0`, `${run} shared 1`];
    const writes = await settledWrites(p.t.baseUrl);
    assert.equal((await embed(p, inputs)).cache, 'MISS');
    await storedAfter(p.t.baseUrl, writes);
    assert.equal((await embed(p, inputs)).cache, 'HIT', "the first organization's own entry");

    const other = await p.t.tenant();
    const registered = await api(p.t.baseUrl, 'POST', '/api/provider-keys/', {
      key: other.key,
      body: { provider: 'openai', api_key: PROVIDER_KEY },
    });
    assert.equal(registered.status, 201, registered.text);
    const client = new OpenAI({ apiKey: other.key, baseURL: `${p.t.baseUrl}/api`, maxRetries: 0 });
    // Neither a part of a call (beside an input of its own) nor a whole call: each input is sent.
    for (const input of [[`${run} theirs`, inputs[0]], [inputs[1]]]) {
      const seen = p.fake.requests.length;
      const writes = await settledWrites(p.t.baseUrl);
      const theirs = await embed(p, input, {}, client);
      assert.equal(theirs.cache, 'MISS');
      assert.equal(p.fake.requests.length, seen + 1, 'the other organization reached the provider');
      assert.deepEqual((p.fake.requests.at(-1)!.json as { input: string[] }).input, input, 'with every input');
      await storedAfter(p.t.baseUrl, writes);
    }
    // Its own answers are kept, for it alone.
    assert.equal((await embed(p, [inputs[1]], {}, client)).cache, 'HIT');
  });
});

describe('embeddings with a broken response cache', () => {
  let p: ProxyTestApp;
  before(async () => {
    p = await startProxyApp();
  });
  after(async () => {
    await p?.close();
  });

  it('are still answered from the provider, the failures counted', async () => {
    // Stored once while the cache worked, then the cache cannot be read nor written.
    const inputs = [`broken ${Date.now()} 0`, `broken ${Date.now()} 1`, `broken ${Date.now()} 2`];
    const writes = await settledWrites(p.t.baseUrl);
    assert.equal((await embed(p, inputs.slice(0, 2))).cache, 'MISS');
    await storedAfter(p.t.baseUrl, writes);
    await sql`drop table cache_entries`.execute(p.t.db.db);
    const errors = await metric(p.t.baseUrl, 'gatelog_cache_errors_total');

    for (const encoding of ['float', 'base64'] as const) {
      const seen = p.fake.requests.length;
      const res = await embed(p, inputs, { encoding_format: encoding });
      assert.equal(res.cache, 'MISS', 'an entry that cannot be read is a miss');
      assert.equal(p.fake.requests.length, seen + 1);
      assert.deepEqual((p.fake.requests.at(-1)!.json as { input: string[] }).input, inputs, 'every input sent');
      assert.equal(res.data.data.length, 3);
      res.data.data.forEach((item, i) => {
        assert.equal(item.index, i);
        assert.deepEqual(vectorOf(item.embedding), f32(vectorFor(i, DIMS)));
      });
      assert.equal(res.data.usage.prompt_tokens, 6);
      const log = await logNamedBy(p, res.logId);
      assert.equal(log.status_code, 200);
      assert.equal(log.cache_hit, false);
      assert.equal(log.prompt_tokens, 6);
    }
    // Per call, a read that failed and a write that failed (the write lands after the answer).
    for (let waited = 0; (await metric(p.t.baseUrl, 'gatelog_cache_errors_total')) < errors + 4; waited += 50) {
      assert.ok(waited < 5000, 'the failed reads and writes are counted');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
});
