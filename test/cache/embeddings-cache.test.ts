/**
 * The response cache for embeddings, item by item (docs/api.md "Response cache"): a call whose inputs
 * are partly known sends only the others upstream and answers every input in order (floats and base64),
 * its usage and cost counting only what was sent; a call whose inputs are all known never reaches the
 * provider.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type OpenAI from 'openai';
import { vectorFor } from '../support/fake-upstream.js';
import { logNamedBy, type ProxyTestApp, startProxyApp } from '../support/proxy-app.js';

const DIMS = 1536;
const f32 = (v: number[]) => v.map((x) => Math.fround(x));
const decode = (b64: string) => {
  const bytes = Buffer.from(b64, 'base64');
  return Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
};

describe('embeddings in the response cache', () => {
  let p: ProxyTestApp;
  const run = `run ${Date.now()}`;
  const inputs = Array.from({ length: 100 }, (_, i) => `${run} text ${i}`);
  const embed = async (input: string[], extra: Record<string, unknown> = {}) => {
    const { data, response } = await p.client.embeddings
      .create({ model: 'text-embedding-3-small', input, cache_enabled: true, ...extra } as OpenAI.EmbeddingCreateParams)
      .withResponse();
    const log = await logNamedBy(p, response.headers.get('x-gatelog-log-id'));
    return { data, log, cache: response.headers.get('x-gatelog-cache') };
  };
  const stored = () => new Promise((resolve) => setTimeout(resolve, 200));

  before(async () => {
    p = await startProxyApp();
  });
  after(async () => {
    await p?.close();
  });

  it('sends only the inputs it does not know, and answers all of them in order', async () => {
    const first = await embed(inputs.slice(0, 90));
    assert.equal(first.cache, 'MISS');
    await stored();
    const seen = p.fake.requests.length;
    const second = await embed(inputs);
    assert.equal(second.cache, 'PARTIAL');
    assert.equal(p.fake.requests.length, seen + 1);
    const sent = p.fake.requests.at(-1)!.json as { input: string[] };
    assert.deepEqual(sent.input, inputs.slice(90));
    assert.equal(second.data.data.length, 100);
    second.data.data.forEach((item, i) => {
      assert.equal(item.index, i);
      // Known inputs: the vector they got in the first call; the rest: the provider's answer to the ten.
      const expected = i < 90 ? first.data.data[i].embedding : vectorFor(i - 90, DIMS);
      assert.deepEqual(f32(item.embedding), f32(expected), `input ${i}`);
    });
    // Usage and cost count the ten sent: the fake counts 2 tokens an input.
    assert.equal(second.data.usage.prompt_tokens, 20);
    assert.equal(second.log.prompt_tokens, 20);
    assert.ok(Math.abs(second.log.cost - (20 * 0.02) / 1e6) < 1e-12, `cost ${second.log.cost}`);
    assert.equal(second.log.embedding_count, 100);
  });

  it('answers inputs it all knows without the provider, in base64 too', async () => {
    await stored();
    const seen = p.fake.requests.length;
    const hit = await embed([inputs[95], inputs[3]], { encoding_format: 'base64' });
    assert.equal(hit.cache, 'HIT');
    assert.equal(p.fake.requests.length, seen);
    assert.equal(hit.log.cache_hit, true);
    assert.equal(hit.log.cost, 0);
    assert.equal(hit.data.usage.prompt_tokens, 0);
    const [a, b] = hit.data.data.map((d) => decode(d.embedding as unknown as string));
    assert.deepEqual(a, f32(vectorFor(5, DIMS)));
    assert.deepEqual(b, f32(vectorFor(3, DIMS)));
  });

  it('keeps other dimensions and other models apart', async () => {
    const seen = p.fake.requests.length;
    assert.equal((await embed([inputs[0]], { dimensions: 256 })).cache, 'MISS');
    assert.equal((await embed([inputs[0]], { model: 'text-embedding-3-large' })).cache, 'MISS');
    assert.equal(p.fake.requests.length, seen + 2);
  });
});
