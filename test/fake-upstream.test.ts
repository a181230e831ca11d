import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { startFakeUpstream, type FakeUpstream } from './support/fake-upstream.js';

// The fake is what the proxy tests stand on, so check that the official client accepts its answers.
describe('the fake upstream speaks the OpenAI API', () => {
  let fake: FakeUpstream;
  let client: OpenAI;
  before(async () => {
    fake = await startFakeUpstream();
    client = new OpenAI({ apiKey: 'sk-fake', baseURL: fake.baseUrl, maxRetries: 0 });
  });
  after(() => fake.close());

  it('answers embeddings in float and base64, and records the request', async () => {
    const floats = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: ['a', 'b'],
      encoding_format: 'float',
    });
    assert.equal(floats.data.length, 2);
    assert.equal(floats.data[0].embedding.length, 1536);
    const decoded = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'a', dimensions: 8 });
    assert.equal(decoded.data[0].embedding.length, 8);
    const last = fake.requests.at(-1)!;
    assert.equal(last.path, '/v1/embeddings');
    assert.equal(last.headers.authorization, 'Bearer sk-fake');
    assert.equal((last.json as { encoding_format: string }).encoding_format, 'base64');
  });

  it('fails, then recovers, when told to', async () => {
    fake.behave(
      {
        kind: 'fail',
        status: 429,
        body: { error: { message: 'slow down', type: 'rate_limit', param: null, code: null } },
      },
      1,
    );
    await assert.rejects(client.embeddings.create({ model: 'text-embedding-3-small', input: 'a' }), (err: unknown) => {
      return err instanceof OpenAI.APIError && err.status === 429;
    });
    const ok = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'a' });
    assert.equal(ok.data.length, 1);
  });
});
