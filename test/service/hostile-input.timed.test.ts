/**
 * Inputs that once answered 500 or Fastify's own body (issue: no single request may break gatelog):
 * each is a 400 (or 404/413/431) in the envelope, on both databases.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { api, type ApiResponse, startApp, type TestApp } from '../support/harness.js';
import { respondsWithin, stallBoundMs } from '../support/responsive.js';

export function assertEnvelope(res: ApiResponse, status: number, param?: string | null) {
  assert.equal(res.status, status, res.text.slice(0, 300));
  assert.match(res.headers.get('content-type') ?? '', /application\/json/);
  assert.deepEqual(Object.keys(res.body).sort(), ['detail', 'error']);
  assert.equal(typeof res.body.error.message, 'string');
  if (param !== undefined) assert.equal(res.body.error.param, param, res.body.error.message);
}

/** Sends raw bytes and returns the status line and body, for requests fetch() will not send. */
function rawRequest(baseUrl: string, text: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.end(text));
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => (data += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0);
      resolve({ status, body: data.slice(data.indexOf('\r\n\r\n') + 4) });
    });
  });
}

describe('hostile and careless inputs', () => {
  let t: TestApp;
  let key: string;
  before(async () => {
    t = await startApp();
    ({ key } = await t.tenant());
  });
  after(() => t.close());

  it('token counting of a huge run of letters is a quick 400 that holds no one else', async () => {
    const other = await t.tenant();
    const body = {
      model: 'text-embedding-3-small',
      input: 'x'.repeat(288_000),
      customer_credentials: { openai: { api_key: 'sk-test' } },
    };
    const { result, slowestMs, runs } = await respondsWithin(t.baseUrl, stallBoundMs(), () =>
      api(t.baseUrl, 'POST', '/api/embeddings', { key: other.key, body }),
    );
    assertEnvelope(result, 400, 'input');
    assert.equal(result.body.error.code, 'context_length_exceeded');
    assert.ok(slowestMs < stallBoundMs(), `/health took ${runs.map((ms) => ms.toFixed(0)).join(' and ')} ms meanwhile`);
    const many = { ...body, input: Array.from({ length: 256 }, () => 'y'.repeat(9000)) };
    const counted = await respondsWithin(t.baseUrl, stallBoundMs(), () =>
      api(t.baseUrl, 'POST', '/api/embeddings', {
        key: other.key,
        body: { ...many, input: [...many.input, 'z'.repeat(90_000)] },
      }),
    );
    assertEnvelope(counted.result, 400);
    const took = counted.runs.map((ms) => ms.toFixed(0)).join(' and ');
    assert.ok(counted.slowestMs < stallBoundMs(), `/health took ${took} ms meanwhile`);
  });

  it('sort_by naming an Object.prototype member is a 400', async () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', '-valueOf']) {
      const res = await api(t.baseUrl, 'GET', `/api/request-logs/list/?sort_by=${encodeURIComponent(name)}`, { key });
      assertEnvelope(res, 400, 'sort_by');
    }
  });

  it('an embeddings model named after an Object.prototype member is a 400', async () => {
    for (const model of ['constructor', '__proto__', 'toString']) {
      const body = { model, input: 'hi', customer_credentials: { openai: { api_key: 'sk-test' } } };
      const res = await api(t.baseUrl, 'POST', '/api/embeddings', { key, body });
      assertEnvelope(res, 400, 'model');
    }
  });

  it('a page number beyond any store is a 400 naming page', async () => {
    for (const page of ['1e22', '10000000000000000000000', '9007199254740993']) {
      const res = await api(t.baseUrl, 'GET', `/api/request-logs/list/?page=${page}`, { key });
      assertEnvelope(res, 400, 'page');
    }
  });

  it('too many values in one filter, or too many filters, is a 400 naming them', async () => {
    const values = Array.from({ length: 1200 }, (_, i) => `v${i}`);
    let res = await api(t.baseUrl, 'POST', '/api/request-logs/list/', {
      key,
      body: { filters: { customer_identifier: { operator: 'icontains', value: values } } },
    });
    assertEnvelope(res, 400, 'filters.customer_identifier.value');
    const many: Record<string, unknown> = {};
    for (let i = 0; i < 60; i++) many[`metadata__k${i}`] = { operator: '', value: ['x'] };
    res = await api(t.baseUrl, 'POST', '/api/request-logs/list/', { key, body: { filters: many } });
    assertEnvelope(res, 400, 'filters');
  });

  it('the largest allowed filters run: 500 icontains values on several text fields at once', async () => {
    const values = Array.from({ length: 500 }, (_, i) => (i % 2 ? `%_\\${i}` : `é${i}`));
    const filters: Record<string, unknown> = {};
    for (const f of ['customer_identifier', 'model', 'customer_email', 'thread_identifier', 'provider_id']) {
      filters[f] = { operator: 'icontains', value: values };
    }
    const res = await api(t.baseUrl, 'POST', '/api/request-logs/list/', { key, body: { filters } });
    assert.equal(res.status, 200, res.text.slice(0, 300));
  });

  it('JSON nested thousands deep is a 400, and an embeddings call so rejected is logged', async () => {
    const deep = '{"a":'.repeat(5000) + '1' + '}'.repeat(5000);
    let res = await api(t.baseUrl, 'POST', '/api/request-logs/create/', {
      key,
      body: `{"model":"m","metadata":${deep}}`,
    });
    assertEnvelope(res, 400);
    const other = await t.tenant();
    res = await api(t.baseUrl, 'POST', '/api/embeddings', {
      key: other.key,
      body: `{"model":"text-embedding-3-small","input":"x","metadata":${deep}}`,
    });
    assertEnvelope(res, 400);
    await t.flush();
    const logs = await api(t.baseUrl, 'GET', '/api/request-logs/list/', { key: other.key });
    assert.equal(logs.status, 200);
    assert.equal(logs.body.count, 1, 'the rejected embeddings call made one log');
    assert.equal(logs.body.results[0].status_code, 400);
  });

  it('integers beyond 32 bits and NUL characters in filters and paths are 400s, not database errors', async () => {
    let res = await api(t.baseUrl, 'POST', '/api/request-logs/list/', {
      key,
      body: { filters: { status_code: { operator: 'gt', value: [3_000_000_000] } } },
    });
    assertEnvelope(res, 400, 'filters.status_code.value');
    res = await api(t.baseUrl, 'GET', '/api/request-logs/list/?prompt_tokens=99999999999', { key });
    assertEnvelope(res, 400, 'prompt_tokens');
    res = await api(t.baseUrl, 'POST', '/api/request-logs/list/', {
      key,
      body: { filters: { model: { operator: '', value: ['a\u0000b'] } } },
    });
    assertEnvelope(res, 400, 'filters.model.value.0');
    res = await api(t.baseUrl, 'GET', `/api/request-logs/list/?model=${encodeURIComponent('a\u0000b')}`, { key });
    assertEnvelope(res, 400, 'model');
    res = await api(t.baseUrl, 'GET', '/api/request-logs/list/?metadata__a%00b=1', { key });
    assertEnvelope(res, 400);
    res = await api(t.baseUrl, 'GET', '/api/request-logs/ab%00cd/', { key });
    assertEnvelope(res, 404);
    res = await api(t.baseUrl, 'DELETE', '/api/provider-keys/op%00enai/', { key });
    assertEnvelope(res, 404);
  });

  it('NUL characters: refused in text fields with a 400 naming them, kept where a log holds JSON text', async () => {
    let res = await api(t.baseUrl, 'POST', '/api/request-logs/create/', {
      key,
      body: { model: 'gpt-4o', metadata: { plan: 'pro\u0000' } },
    });
    assertEnvelope(res, 400, 'metadata.plan');
    res = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', {
      key,
      body: { logs: [{ model: 'ok' }, { model: 'm\u0000' }] },
    });
    assertEnvelope(res, 400, 'logs.1.model');
    res = await api(t.baseUrl, 'POST', '/api/evaluators/', {
      key,
      body: { name: 'a\u0000b', evaluator_slug: 'nul', type: 'human', score_value_type: 'numerical' },
    });
    assertEnvelope(res, 400, 'name');
    const created = await api(t.baseUrl, 'POST', '/api/request-logs/create/', {
      key,
      body: { model: 'gpt-4o', input: [{ role: 'user', content: 'before\u0000after' }], output: 'x\u0000y' },
    });
    assert.equal(created.status, 201, created.text);
    await t.flush();
    const one = await api(t.baseUrl, 'GET', `/api/request-logs/${created.body.unique_id}/`, { key });
    assert.equal(one.status, 200);
    assert.equal(one.body.prompt_messages[0].content, 'before\u0000after');
    res = await api(t.baseUrl, 'PATCH', `/api/request-logs/${created.body.unique_id}/`, {
      key,
      body: { metadata: { k: '\u0000' } },
    });
    assertEnvelope(res, 400, 'metadata.k');
  });

  it('a bad URL, an over-long path parameter and oversized headers answer in the envelope', async () => {
    let res = await api(t.baseUrl, 'GET', '/api/request-logs/%E0%A4%A/', { key });
    assertEnvelope(res, 400);
    res = await api(t.baseUrl, 'GET', `/api/request-logs/${'a'.repeat(150)}/`, { key });
    assertEnvelope(res, 404);
    const raw = await rawRequest(
      t.baseUrl,
      `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\nConnection: close\r\n\r\n`,
    );
    assert.equal(raw.status, 431);
    assert.equal(JSON.parse(raw.body).error.code, 'headers_too_large');
  });

  it('a log whose numbers are out of any real range is refused, naming the field', async () => {
    const cases: [string, unknown][] = [
      ['latency', 1e13],
      ['latency', 1e300],
      ['prompt_tokens', 3_000_000_000],
      ['completion_tokens', 2 ** 53],
      ['cost', 1e300],
      ['time_to_first_token', 1e13],
      ['max_tokens', 1e12],
    ];
    for (const [field, value] of cases) {
      const res = await api(t.baseUrl, 'POST', '/api/request-logs/create/', {
        key,
        body: { model: 'gpt-4o', [field]: value },
      });
      assertEnvelope(res, 400, field);
    }
    const ok = await api(t.baseUrl, 'POST', '/api/request-logs/create/', {
      key,
      body: { model: 'gpt-4o', latency: 86_400, prompt_tokens: 2_000_000_000 },
    });
    assert.equal(ok.status, 201, ok.text);
  });
});

describe('a stored value no date can hold', () => {
  let t: TestApp;
  before(async () => (t = await startApp()));
  after(() => t.close());

  it('does not break the log or the list pages that hold it', async () => {
    const { key } = await t.tenant();
    const created = await api(t.baseUrl, 'POST', '/api/request-logs/create/', { key, body: { model: 'gpt-4o' } });
    assert.equal(created.status, 201);
    await t.flush();
    // As a log stored before the ranges were enforced: its start time is no valid date.
    await t.db.db
      .updateTable('logs')
      .set({ start_time: -1e16, latency: 1e13 })
      .where('unique_id', '=', created.body.unique_id)
      .execute();
    const one = await api(t.baseUrl, 'GET', `/api/request-logs/${created.body.unique_id}/`, { key });
    assert.equal(one.status, 200, one.text);
    assert.equal(one.body.start_time, null);
    const page = await api(t.baseUrl, 'GET', '/api/request-logs/list/', { key });
    assert.equal(page.status, 200, page.text);
    assert.equal(page.body.count, 1);
  });
});
