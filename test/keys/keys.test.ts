/**
 * Keys that can be handed out (docs/api.md "Keys"): made, read, changed, revoked
 * and rotated over HTTP; each scope against each route family through the official openai client and
 * the API; every route of the OpenAPI document assigned a scope; the privilege rule — no key makes or
 * changes a key with more than it has, and no key reaches another organization.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { SCOPES } from '../../src/auth/scopes.js';
import { api, type ApiResponse } from '../support/harness.js';
import { pollUntil } from '../support/poll.js';
import { type ProxyTestApp, startProxyApp } from '../support/proxy-app.js';

type Scope = (typeof SCOPES)[number];

interface Operation {
  security?: unknown[];
  description?: string;
  responses: Record<string, unknown>;
  'x-gatelog-scope'?: Scope | 'any' | Scope[];
}

describe('keys over HTTP', () => {
  let p: ProxyTestApp;
  const call = (key: string, method: string, path: string, body?: unknown): Promise<ApiResponse> =>
    api(p.t.baseUrl, method, path, { key, body });
  const makeKey = async (key: string, body: Record<string, unknown>) => {
    const made = await call(key, 'POST', '/api/keys/', body);
    assert.equal(made.status, 201, made.text);
    return made.body as { id: string; key: string; scopes: Scope[] };
  };
  const refusedFor = (res: ApiResponse, status: number, code: string, param?: string | null) => {
    assert.equal(res.status, status, res.text);
    assert.equal(res.body.error.code, code, res.text);
    if (param !== undefined) assert.equal(res.body.error.param, param, res.text);
  };

  before(async () => {
    p = await startProxyApp();
  });
  after(async () => p.close());

  it('makes a key whose secret is shown once, and lists and reads it without the secret', async () => {
    const made = await call(p.a.key, 'POST', '/api/keys/', {
      name: 'ci-service',
      owner: { email: 'ci@acme.test' },
      allowed_models: ['gpt-4o*'],
    });
    assert.equal(made.status, 201, made.text);
    const key = made.body;
    assert.match(key.key, /^gl_live_/);
    assert.equal(key.prefix, key.key.slice(0, 16));
    assert.deepEqual(key.scopes, ['models', 'ingest', 'read', 'admin']);
    assert.deepEqual(key.allowed_models, ['gpt-4o*']);
    assert.equal(key.expires_at, null);
    assert.equal(key.last_used_at, null);
    assert.equal(key.owner.email, 'ci@acme.test');

    const read = await call(p.a.key, 'GET', `/api/keys/${key.id}/`);
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.key, undefined);
    assert.equal(read.body.name, 'ci-service');
    const list = await call(p.a.key, 'GET', '/api/keys/');
    assert.equal(list.status, 200, list.text);
    assert.ok(list.body.results.some((k: { id: string }) => k.id === key.id));
    assert.ok(list.body.results.every((k: Record<string, unknown>) => !('key' in k)));
    assert.ok(!list.text.includes(key.key), 'the secret is never read back');

    // Used once, its last use is known (within a minute).
    // The mark is written beside the request, not before its answer: read until it has landed.
    assert.equal((await call(key.key, 'GET', '/api/keys/current/')).status, 200);
    let lastUsed: string | null = null;
    await pollUntil(
      async () => (lastUsed = (await call(p.a.key, 'GET', `/api/keys/${key.id}/`)).body.last_used_at) !== null,
      'last_used_at to be set',
    );
    assert.ok(Date.parse(lastUsed!) > Date.now() - 60_000, String(lastUsed));
  });

  it('refuses bad settings with a 400 naming the field', async () => {
    const bad: [Record<string, unknown>, string][] = [
      [{ name: 'x', scopes: [] }, 'scopes'],
      [{ name: 'x', scopes: ['write'] }, 'scopes.0'],
      [{ name: 'x', rate_limits: { requests_per_minute: 0 } }, 'rate_limits.requests_per_minute'],
      [{ name: 'x', rate_limits: { requests_per_minute: 10, rpm: 5 } }, 'rate_limits.rpm'],
      [{ name: 'x', expires_at: '2001-01-01T00:00:00Z' }, 'expires_at'],
      [{ name: 'x', is_test: true, scopes: ['read', 'admin'] }, 'scopes'],
      [{ name: '' }, 'name'],
    ];
    for (const [body, param] of bad) {
      const res = await call(p.a.key, 'POST', '/api/keys/', body);
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
      assert.equal(res.body.error.param, param, res.text);
    }
    const test = await makeKey(p.a.key, { name: 'a test key', is_test: true });
    assert.deepEqual(test.scopes, ['models', 'ingest', 'read']);
  });

  it('lets each scope reach its own routes and refuses it the others with a 403 naming the scope', async () => {
    const keys = {} as Record<Scope, string>;
    for (const scope of SCOPES) keys[scope] = (await makeKey(p.a.key, { name: `only-${scope}`, scopes: [scope] })).key;
    const families: Record<Scope, (key: string) => Promise<number>> = {
      models: async (key) => {
        const client = new OpenAI({ apiKey: key, baseURL: `${p.t.baseUrl}/api`, maxRetries: 0 });
        try {
          await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
          return 200;
        } catch (err) {
          if (err instanceof OpenAI.PermissionDeniedError) {
            assert.match(err.message, /'models' scope/);
            return 403;
          }
          throw err;
        }
      },
      ingest: async (key) => (await call(key, 'POST', '/api/request-logs/create/', { model: 'm' })).status,
      read: async (key) => (await call(key, 'GET', '/api/request-logs/list/')).status,
      admin: async (key) => (await call(key, 'GET', '/api/provider-keys/')).status,
    };
    for (const holder of SCOPES) {
      for (const family of SCOPES) {
        const status = await families[family](keys[holder]);
        if (holder === family) assert.ok(status === 200 || status === 201, `${holder} on ${family}: ${status}`);
        else assert.equal(status, 403, `a ${holder} key on the ${family} routes`);
      }
    }
    const denied = await call(keys.read, 'GET', '/api/keys/');
    refusedFor(denied, 403, 'permission_denied');
    assert.match(denied.body.error.message, /'admin' scope/);
    // The route that lists or records by its body: each needs its own scope.
    assert.equal((await call(keys.read, 'POST', '/api/request-logs/', { filters: {} })).status, 200);
    refusedFor(await call(keys.read, 'POST', '/api/request-logs/', { model: 'm' }), 403, 'permission_denied');
    assert.equal((await call(keys.ingest, 'POST', '/api/request-logs/', { model: 'm' })).status, 201);
    // Every key may read itself.
    for (const scope of SCOPES) assert.equal((await call(keys[scope], 'GET', '/api/keys/current/')).status, 200);
  });

  it('documents the scope of every authenticated route in the OpenAPI document', async () => {
    const doc = (await call(p.a.key, 'GET', '/api/openapi.json')).body;
    let secured = 0;
    for (const [path, operations] of Object.entries(doc.paths as Record<string, Record<string, Operation>>)) {
      for (const [method, op] of Object.entries(operations)) {
        if (Array.isArray(op.security) && op.security.length === 0) continue;
        secured++;
        const scope = op['x-gatelog-scope'];
        const valid =
          scope === 'any' ||
          (typeof scope === 'string' && SCOPES.includes(scope)) ||
          (Array.isArray(scope) && scope.length === 2 && scope.every((s) => SCOPES.includes(s)));
        assert.ok(valid, `${method.toUpperCase()} ${path} has no scope`);
        assert.match(op.description ?? '', /Needs a key with the scope/, `${method.toUpperCase()} ${path}`);
        assert.ok(op.responses['403'], `${method.toUpperCase()} ${path} documents its 403`);
      }
    }
    assert.ok(secured > 70, `${secured} authenticated operations`);
  });
});
