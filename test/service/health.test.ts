import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, startApp, type TestApp } from '../support/harness.js';

describe('GET /health and unmatched routes', () => {
  let t: TestApp;
  before(async () => (t = await startApp()));
  after(() => t.close());

  it('answers ok when the database answers', async () => {
    const res = await api(t.baseUrl, 'GET', '/health');
    assert.equal(res.status, 200);
    // The process that answered: this one, no worker of a `serve --workers` (docs/api.md "Health").
    assert.deepEqual(res.body, {
      status: 'ok',
      dead_letters: 0,
      retention: null,
      search_index: { state: 'ok', set_aside: 0 },
      pid: process.pid,
      worker: null,
    });
  });

  it('answers 404 in the envelope for an unknown route', async () => {
    const res = await api(t.baseUrl, 'GET', '/api/nothing-here/');
    assert.equal(res.status, 404);
    assert.equal(res.body.error.type, 'not_found_error');
    assert.equal(res.body.detail, res.body.error.message);
    assert.match(res.body.detail, /\/api\/nothing-here\//);
  });

  it('answers 405 with Allow for a wrong method on a known route', async () => {
    const res = await api(t.baseUrl, 'DELETE', '/health');
    assert.equal(res.status, 405);
    assert.match(res.headers.get('allow') ?? '', /GET/);
    assert.equal(res.body.error.type, 'invalid_request_error');
    assert.equal(res.body.error.code, 'method_not_allowed');
  });
});
