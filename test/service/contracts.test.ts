/** Route contracts: the OpenAPI document, and the harness check that answers keep to it. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { api, startApp } from '../support/harness.js';
import { servedRoutes } from '../support/routes.js';

interface Operation {
  summary?: string;
  security?: unknown[];
  responses: Record<string, { content?: Record<string, unknown> }>;
}

describe('route contracts', () => {
  it('serves the OpenAPI 3.1 document without a key, with the schemas routes declare', async () => {
    const t = await startApp();
    try {
      const res = await fetch(`${t.baseUrl}/api/openapi.json`);
      assert.equal(res.status, 200);
      const doc = (await res.json()) as {
        openapi: string;
        paths: Record<string, Record<string, { requestBody?: unknown; responses: Record<string, unknown> }>>;
        components: { securitySchemes: Record<string, { scheme: string }> };
      };
      assert.equal(doc.openapi, '3.1.0');
      assert.equal(doc.components.securitySchemes.bearer.scheme, 'bearer');
      const create = doc.paths['/api/evaluators/'].post;
      assert.ok(create.requestBody, 'the body schema is documented');
      assert.deepEqual(Object.keys(create.responses).sort(), ['201', '400', '401', '403', '409', '413', '415', '503']);
    } finally {
      await t.close();
    }
  });

  it('documents every route the app serves, each with its answers and their schemas', async () => {
    const t = await startApp();
    try {
      const doc = (await (await fetch(`${t.baseUrl}/api/openapi.json`)).json()) as {
        paths: Record<string, Record<string, Operation>>;
      };
      const documented = new Set<string>();
      for (const [route, ops] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(ops)) {
          const name = `${method.toUpperCase()} ${route.replace(/\/$/, '')}`;
          documented.add(name);
          assert.ok(op.summary, `${name} has a summary`);
          // A redirect is the success of a route that only redirects (GET /).
          const success = Object.entries(op.responses).filter(([status]) => /^[23]\d\d$/.test(status));
          assert.ok(success.length > 0, `${name} declares its success`);
          for (const [status, answer] of success) {
            const declared = status === '204' || Object.keys(answer.content ?? {}).length > 0;
            assert.ok(declared, `${name} → ${status} has a schema (${JSON.stringify(answer)})`);
          }
          const open = Array.isArray(op.security) && op.security.length === 0;
          if (!open) assert.ok(op.responses['401'], `${name} declares its 401`);
        }
      }
      const served = servedRoutes(t.app.printRoutes({ commonPrefix: false }));
      assert.deepEqual([...documented].sort(), [...served].map((r) => r.replace(/\/$/, '')).sort());
    } finally {
      await t.close();
    }
  });

  it('serves /docs: the guide, then every route of the OpenAPI document', async () => {
    const t = await startApp();
    try {
      const res = await fetch(`${t.baseUrl}/docs`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
      const html = await res.text();
      assert.match(html, /<h2 id="filter-language">Filter language<\/h2>/);
      const doc = (await (await fetch(`${t.baseUrl}/api/openapi.json`)).json()) as {
        paths: Record<string, Record<string, unknown>>;
      };
      let routes = 0;
      for (const [path, ops] of Object.entries(doc.paths)) {
        for (const method of Object.keys(ops)) {
          routes += 1;
          assert.ok(html.includes(`id="${method}-${path}"`), `${method} ${path} on /docs`);
        }
      }
      assert.ok(routes > 15, `${routes} routes`);
    } finally {
      await t.close();
    }
  });

  it('validates requests with the declared schemas, in the usual envelope', async () => {
    const t = await startApp();
    try {
      const { key } = await t.tenant();
      const res = await api(t.baseUrl, 'POST', '/api/evaluators/', { key, body: { name: 'x', type: 'robot' } });
      assert.equal(res.status, 400);
      assert.equal(res.body.error.param, 'type');
      const repeated = await api(t.baseUrl, 'GET', '/api/evaluators/?page=1&page=2', { key });
      assert.equal(repeated.status, 400);
      assert.equal(repeated.body.error.param, 'page');
    } finally {
      await t.close();
    }
  });

  it('the test harness fails a test whose answers break their declared schema', async () => {
    const t = await startApp({
      beforeListen: (app) => {
        app.get('/wrong-shape', { schema: { response: { 200: z.object({ n: z.number() }) } } }, async () => ({
          n: 'x',
        }));
        app.get('/undeclared-status', { schema: { response: { 200: z.object({}) } } }, async (_req, reply) =>
          reply.status(202 as never).send({} as never),
        );
      },
    });
    await fetch(`${t.baseUrl}/wrong-shape`);
    await fetch(`${t.baseUrl}/undeclared-status`);
    await assert.rejects(t.close(), (err: Error) => {
      assert.match(err.message, /GET \/wrong-shape → 200: /);
      assert.match(err.message, /GET \/undeclared-status → 202: status not declared/);
      return true;
    });
  });
});
