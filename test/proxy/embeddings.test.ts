import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import OpenAI from 'openai';
import { api, type Tenant, type TestApp } from '../support/harness.js';
import { type FakeUpstream, vectorFor } from '../support/fake-upstream.js';
import { PROVIDER_KEY, type ProxyTestApp, startProxyApp } from '../support/proxy-app.js';
import { schemaErrors } from '../support/openapi.js';
import { base64ByteLength } from '../../src/gateway/embeddings/route.js';

describe('POST /api/embeddings through the official openai client', () => {
  let p: ProxyTestApp;
  let fake: FakeUpstream;
  let t: TestApp;
  let a: Tenant;
  let client: OpenAI;

  const lastLogs = async (n: number, key = a.key) => {
    await t.flush();
    const res = await api(t.baseUrl, 'GET', `/api/request-logs/list/?page_size=${n}&all_envs=true`, { key });
    return res.body.results;
  };

  before(async () => {
    p = await startProxyApp({ GATELOG_UPSTREAM_TIMEOUT_MS: '1500' });
    ({ fake, t, a, client } = p);
  });
  beforeEach(() => fake.behave({ kind: 'ok' }));
  after(() => p.close());

  it('answers the default (base64) request, decoded by the client, and logs it', async () => {
    const res = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'hello world' });
    assert.equal(res.data.length, 1);
    assert.equal(res.data[0].embedding.length, 1536);
    const expected = vectorFor(0, 1536);
    assert.ok(res.data[0].embedding.every((v, i) => Math.abs(v - expected[i]) < 1e-6));
    const sent = fake.requests.at(-1)!;
    assert.equal(sent.headers.authorization, `Bearer ${PROVIDER_KEY}`);
    assert.equal((sent.json as { encoding_format: string }).encoding_format, 'base64');

    const [log] = await lastLogs(1);
    assert.equal(log.log_type, 'embedding');
    assert.equal(log.log_method, 'inference');
    assert.equal(log.model, 'text-embedding-3-small');
    assert.equal(log.status_code, 200);
    assert.equal(log.prompt_tokens, 2, 'tokens come from the upstream usage');
    assert.equal(log.cost, 4e-8);
    assert.equal(log.embedding_dimensions, 1536);
    assert.equal(log.embedding_count, 1);
    assert.equal(log.provider_id, 'openai');
    assert.equal(log.used_custom_credential, false);
    assert.ok(log.latency >= 0 && log.routing_time >= 0);
    assert.equal(JSON.parse(log.input), 'hello world');
    const output = JSON.parse(log.output);
    assert.deepEqual(output, {
      object: 'list',
      model: 'text-embedding-3-small',
      usage: { prompt_tokens: 2, total_tokens: 2 },
      data_count: 1,
      dimensions: 1536,
    });
  });

  it('answers explicit float with a response that matches CreateEmbeddingResponse', async () => {
    const res = await client.embeddings.create({
      model: 'text-embedding-3-large',
      input: ['a', 'b'],
      encoding_format: 'float',
      dimensions: 256,
    });
    assert.deepEqual(schemaErrors('CreateEmbeddingResponse', res), []);
    assert.equal(res.data.length, 2);
    assert.equal(res.data[1].embedding.length, 256);
    assert.equal(typeof res.data[0].embedding[0], 'number');
  });

  it('passes base64 through untouched, and encodes floats when the upstream ignored base64', async () => {
    const raw = await fetch(`${t.baseUrl}/api/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'text-embedding-3-small', input: 'x', encoding_format: 'base64', dimensions: 4 }),
    });
    const body = (await raw.json()) as { data: { embedding: string }[] };
    const expected = Buffer.from(new Float32Array(vectorFor(0, 4)).buffer).toString('base64');
    assert.equal(body.data[0].embedding, expected);
    // The dimensions of a base64 vector are read from the string's length, not by decoding it.
    assert.equal((await lastLogs(1))[0].embedding_dimensions, 4);

    fake.behave({ kind: 'floats-only' });
    const converted = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'x', dimensions: 4 });
    assert.deepEqual(
      converted.data[0].embedding,
      vectorFor(0, 4).map((v) => Math.fround(v)),
    );
    const explicit = await fetch(`${t.baseUrl}/api/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'text-embedding-3-small', input: 'x', encoding_format: 'base64', dimensions: 4 }),
    });
    assert.equal(((await explicit.json()) as { data: { embedding: string }[] }).data[0].embedding, expected);
  });

  it('rejects every invalid request with a 400 naming the field, forwards nothing, and logs the failure', async () => {
    const big = 'hello '.repeat(8200);
    const cases: [Record<string, unknown>, string][] = [
      [{ input: 'x' }, 'model'],
      [{ model: 'gpt-4o', input: 'x' }, 'model'],
      [{ model: 'text-embedding-3-small' }, 'input'],
      [{ model: 'text-embedding-3-small', input: '' }, 'input'],
      [{ model: 'text-embedding-3-small', input: [] }, 'input'],
      [{ model: 'text-embedding-3-small', input: ['a', ''] }, 'input.1'],
      [{ model: 'text-embedding-3-small', input: ['a', 1] }, 'input'],
      [{ model: 'text-embedding-3-small', input: [[1, 2], []] }, 'input.1'],
      [{ model: 'text-embedding-3-small', input: [[1, -2]] }, 'input.0'],
      [{ model: 'text-embedding-3-small', input: { text: 'x' } }, 'input'],
      [{ model: 'text-embedding-3-small', input: Array.from({ length: 2049 }, () => 'x') }, 'input'],
      [{ model: 'text-embedding-3-small', input: big }, 'input'],
      [{ model: 'text-embedding-3-small', input: ['ok', big] }, 'input.1'],
      [{ model: 'text-embedding-3-small', input: [Array.from({ length: 8193 }, () => 1)] }, 'input.0'],
      [{ model: 'text-embedding-3-small', input: Array.from({ length: 40 }, () => 'word '.repeat(8000)) }, 'input'],
      [{ model: 'text-embedding-3-small', input: 'x', encoding_format: 'int8' }, 'encoding_format'],
      [{ model: 'text-embedding-ada-002', input: 'x', dimensions: 8 }, 'dimensions'],
      [{ model: 'text-embedding-3-small', input: 'x', dimensions: 1537 }, 'dimensions'],
      [{ model: 'text-embedding-3-large', input: 'x', dimensions: 0 }, 'dimensions'],
      [{ model: 'text-embedding-3-large', input: 'x', dimensions: 1.5 }, 'dimensions'],
      [{ model: 'text-embedding-3-small', input: 'x', metadata: 'nope' }, 'metadata'],
      [{ model: 'text-embedding-3-small', input: 'x', customer_identifier: 'c'.repeat(121) }, 'customer_identifier'],
      [
        { model: 'text-embedding-3-small', input: 'x', customer_credentials: { openai: {} } },
        'customer_credentials.openai.api_key',
      ],
      [{ model: 'text-embedding-3-small', input: 'x', disable_log: 'sometimes' }, 'disable_log'],
    ];
    const forwarded = fake.requests.length;
    for (const [body, param] of cases) {
      const res = await api(t.baseUrl, 'POST', '/api/embeddings', { key: a.key, body });
      assert.equal(res.status, 400, JSON.stringify(body).slice(0, 80));
      assert.equal(res.body.error.type, 'invalid_request_error');
      assert.equal(res.body.error.param, param, JSON.stringify(body).slice(0, 80));
    }
    assert.equal(fake.requests.length, forwarded, 'nothing went upstream');
    const logs = await lastLogs(cases.length);
    assert.equal(logs.length, cases.length);
    assert.ok(
      logs.every(
        (l: { failed: boolean; status_code: number; log_type: string }) =>
          l.failed && l.status_code === 400 && l.log_type === 'embedding',
      ),
    );
  });

  it('counts <|endoftext|> as ordinary text and accepts an input of exactly 8192 tokens', async () => {
    const res = await api(t.baseUrl, 'POST', '/api/embeddings', {
      key: a.key,
      body: { model: 'text-embedding-3-small', input: ['<|endoftext|>', ' a'.repeat(8192)] },
    });
    assert.equal(res.status, 200);
  });
});

describe('base64ByteLength', () => {
  it('equals the decoded length for every padding', () => {
    for (let n = 0; n < 64; n++) {
      const text = Buffer.alloc(n, 7).toString('base64');
      assert.equal(base64ByteLength(text), Buffer.from(text, 'base64').length, `${n} bytes`);
    }
  });
});
