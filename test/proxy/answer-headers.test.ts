/**
 * What every answer carries and what is ready before the first caller: `X-Content-Type-Options: nosniff`
 * on API answers of every kind (JSON, errors, 404s, exports, metrics), and the OpenAPI document and the
 * /docs page built before the server listens, so that their first caller holds nobody up.
 */
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { after, before, describe, it } from 'node:test';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';

describe('answer headers and documents built before listening', () => {
  let t: TestApp;
  let a: Tenant;
  let built = 0;
  let builtBeforeListening = 0;
  before(async () => {
    t = await startApp({
      beforeListen: (app: FastifyInstance) => {
        const swagger = app.swagger.bind(app) as (...args: unknown[]) => unknown;
        app.swagger = ((...args: unknown[]) => {
          built++;
          return swagger(...args);
        }) as typeof app.swagger;
      },
    });
    builtBeforeListening = built;
    a = await t.tenant();
  });
  after(() => t.close());

  it('builds the OpenAPI document and /docs before listening, never on a request', async () => {
    assert.ok(builtBeforeListening >= 1, 'the document was built while the server started');
    const first = await api(t.baseUrl, 'GET', '/api/openapi.json');
    assert.equal(first.status, 200);
    assert.equal(first.body.openapi, '3.1.0');
    assert.ok(first.body.paths['/api/request-logs/list/'], 'the document lists the routes');
    assert.match(first.headers.get('content-type') ?? '', /^application\/json/);
    const docs = await api(t.baseUrl, 'GET', '/docs');
    assert.equal(docs.status, 200);
    assert.ok(docs.text.includes('/api/request-logs/list/'));
    await api(t.baseUrl, 'GET', '/api/openapi.json');
    assert.equal(built, builtBeforeListening, 'no request built the document again');
  });

  it('sends nosniff on API answers of every kind', async () => {
    await api(t.baseUrl, 'POST', '/api/request-logs/create/', { key: a.key, body: { model: 'm' } });
    await t.flush();
    const answers = await Promise.all([
      api(t.baseUrl, 'GET', '/health'),
      api(t.baseUrl, 'GET', '/metrics'),
      api(t.baseUrl, 'GET', '/api/request-logs/list/', { key: a.key }),
      api(t.baseUrl, 'GET', '/api/request-logs/export/?format=csv', { key: a.key }),
      api(t.baseUrl, 'GET', '/api/request-logs/list/'),
      api(t.baseUrl, 'GET', '/api/no-such-route/'),
      api(t.baseUrl, 'POST', '/api/request-logs/create/', { key: a.key, body: '{not json' }),
      api(t.baseUrl, 'GET', '/api/openapi.json'),
    ]);
    assert.deepEqual(
      answers.map((r) => r.status),
      [200, 200, 200, 200, 401, 404, 400, 200],
    );
    for (const res of answers) assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
  });
});
