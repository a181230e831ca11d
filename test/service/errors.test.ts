import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, startApp, type TestApp, type ApiResponse } from '../support/harness.js';

function assertEnvelope(res: ApiResponse, status: number, type: string) {
  assert.equal(res.status, status);
  assert.match(res.headers.get('content-type') ?? '', /application\/json/);
  assert.deepEqual(Object.keys(res.body).sort(), ['detail', 'error']);
  assert.deepEqual(Object.keys(res.body.error).sort(), ['code', 'message', 'param', 'type']);
  assert.equal(res.body.error.type, type);
  assert.equal(res.body.detail, res.body.error.message);
  assert.ok(!/\bat .+\.js:\d+/.test(res.text), 'no stack trace');
}

describe('the error envelope', () => {
  let t: TestApp;
  let key: string;
  before(async () => {
    t = await startApp({
      beforeListen: (app) =>
        app.get('/__test/boom', async () => {
          throw new Error('secret internal detail at /srv/x.js:1');
        }),
    });
    ({ key } = await t.tenant());
  });
  after(() => t.close());

  it('400 for a validation failure, naming the field', async () => {
    const res = await api(t.baseUrl, 'POST', '/api/provider-keys/', { key, body: { provider: 'openai' } });
    assertEnvelope(res, 400, 'invalid_request_error');
    assert.equal(res.body.error.param, 'api_key');
  });

  it('400 for a body that is not JSON', async () => {
    const res = await api(t.baseUrl, 'POST', '/api/provider-keys/', { key, body: '{"provider": ' });
    assertEnvelope(res, 400, 'invalid_request_error');
    assert.equal(res.body.error.code, 'invalid_json');
  });

  it('404 for an unknown route, 405 for a wrong method', async () => {
    assertEnvelope(await api(t.baseUrl, 'GET', '/api/unknown/', { key }), 404, 'not_found_error');
    const res = await api(t.baseUrl, 'PUT', '/api/provider-keys/', { key, body: {} });
    assertEnvelope(res, 405, 'invalid_request_error');
    assert.equal(res.headers.get('allow'), 'GET, HEAD, POST');
  });

  it('413 for a body over 20 MB', async () => {
    const body = JSON.stringify({ provider: 'openai', api_key: 'x'.repeat(21 * 1024 * 1024) });
    const res = await api(t.baseUrl, 'POST', '/api/provider-keys/', { key, body });
    assertEnvelope(res, 413, 'invalid_request_error');
  });

  it('500 without internals when something unexpected fails', async () => {
    const res = await api(t.baseUrl, 'GET', '/__test/boom');
    assertEnvelope(res, 500, 'server_error');
    assert.ok(!res.text.includes('secret internal detail'));
  });
});
