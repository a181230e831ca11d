/**
 * The privilege rule of keys (docs/api.md "Keys"): no key makes or changes a key
 * with more than it has, and no key reaches another organization's keys; a revoked, expired or rotated
 * secret stops working (a rotated one after its grace).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, type ApiResponse, startApp, type Tenant, type TestApp } from '../support/harness.js';

describe('key privileges and lifetimes', () => {
  let t: TestApp;
  let a: Tenant;
  let b: Tenant;
  const call = (key: string, method: string, path: string, body?: unknown): Promise<ApiResponse> =>
    api(t.baseUrl, method, path, { key, body });
  const makeKey = async (key: string, body: Record<string, unknown>) => {
    const made = await call(key, 'POST', '/api/keys/', body);
    assert.equal(made.status, 201, made.text);
    return made.body as { id: string; key: string; prefix: string };
  };
  const denied = (res: ApiResponse, param: string | null) => {
    assert.equal(res.status, 403, res.text);
    assert.equal(res.body.error.code, 'permission_denied', res.text);
    assert.equal(res.body.error.param, param, res.text);
  };
  /** Waits until the key is refused (a 401), or fails after a bound. */
  const refusedSoon = async (key: string, withinMs: number) => {
    const until = Date.now() + withinMs;
    for (;;) {
      const res = await call(key, 'GET', '/api/keys/current/');
      if (res.status === 401) return;
      assert.equal(res.status, 200, res.text);
      assert.ok(Date.now() < until, 'the key still works');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  before(async () => {
    t = await startApp();
    a = await t.tenant();
    b = await t.tenant();
  });
  after(async () => t.close());

  it('refuses a models key making a key: only an admin key manages keys', async () => {
    const models = await makeKey(a.key, { name: 'models only', scopes: ['models'] });
    denied(await call(models.key, 'POST', '/api/keys/', { name: 'escalated', scopes: ['admin'] }), null);
    denied(await call(models.key, 'GET', '/api/keys/'), null);
  });

  it('refuses an admin key giving more than it has: scopes, models, expiry', async () => {
    const expires = new Date(Date.now() + 3_600_000).toISOString();
    const limited = await makeKey(a.key, {
      name: 'team admin',
      scopes: ['admin', 'read'],
      allowed_models: ['gpt-4o*'],
      expires_at: expires,
    });
    const within = {
      name: 'ok',
      scopes: ['read'],
      allowed_models: ['gpt-4o-mini'],
      expires_at: expires,
    };
    await makeKey(limited.key, within);
    denied(await call(limited.key, 'POST', '/api/keys/', { ...within, name: 'n1', scopes: ['models'] }), 'scopes');
    denied(
      await call(limited.key, 'POST', '/api/keys/', { ...within, name: 'n2', allowed_models: [] }),
      'allowed_models',
    );
    denied(
      await call(limited.key, 'POST', '/api/keys/', { ...within, name: 'n3', allowed_models: ['gpt-*'] }),
      'allowed_models',
    );
    denied(await call(limited.key, 'POST', '/api/keys/', { ...within, name: 'n6', expires_at: null }), 'expires_at');
    // Widening its own scopes is making a key with more than it has.
    denied(
      await call(limited.key, 'PATCH', `/api/keys/${limited.id}/`, { scopes: ['admin', 'read', 'models'] }),
      'scopes',
    );
    // A key with more than it has is out of its reach: not changed, not revoked, not rotated.
    const full = await makeKey(a.key, { name: 'full' });
    denied(await call(limited.key, 'PATCH', `/api/keys/${full.id}/`, { scopes: ['read'] }), 'scopes');
    denied(await call(limited.key, 'DELETE', `/api/keys/${full.id}/`), 'scopes');
    denied(await call(limited.key, 'POST', `/api/keys/${full.id}/rotate/`, {}), 'scopes');
    assert.equal((await call(full.key, 'GET', '/api/keys/current/')).status, 200);
    // Narrowing its own key is allowed.
    const narrowed = await call(limited.key, 'PATCH', `/api/keys/${limited.id}/`, { allowed_models: ['gpt-4o-mini'] });
    assert.equal(narrowed.status, 200, narrowed.text);
    assert.deepEqual(narrowed.body.allowed_models, ['gpt-4o-mini']);
  });

  it("never reaches another organization's keys: their ids are 404s", async () => {
    const other = await makeKey(b.key, { name: 'b key' });
    for (const [method, path] of [
      ['GET', `/api/keys/${other.id}/`],
      ['PATCH', `/api/keys/${other.id}/`],
      ['DELETE', `/api/keys/${other.id}/`],
      ['POST', `/api/keys/${other.id}/rotate/`],
    ] as const) {
      const res = await call(a.key, method, path, method === 'PATCH' ? { name: 'taken' } : undefined);
      assert.equal(res.status, 404, `${method} ${path}: ${res.text}`);
    }
    assert.equal((await call(other.key, 'GET', '/api/keys/current/')).body.name, 'b key');
    const list = await call(a.key, 'GET', '/api/keys/');
    assert.ok(list.body.results.every((k: { id: string }) => k.id !== other.id));
  });

  it('revokes a key at once', async () => {
    const key = await makeKey(a.key, { name: 'to revoke' });
    assert.equal((await call(a.key, 'DELETE', `/api/keys/${key.id}/`)).status, 204);
    assert.equal((await call(key.key, 'GET', '/api/keys/current/')).status, 401);
    assert.ok((await call(a.key, 'GET', `/api/keys/${key.id}/`)).body.revoked_at !== null);
  });

  it('rotates a key: same id and settings, a new secret, the old one valid for its grace', async () => {
    const key = await makeKey(a.key, { name: 'rotating', scopes: ['read'] });
    const rotated = await call(a.key, 'POST', `/api/keys/${key.id}/rotate/`, { grace_seconds: 2 });
    assert.equal(rotated.status, 200, rotated.text);
    assert.equal(rotated.body.id, key.id);
    assert.deepEqual(rotated.body.scopes, ['read']);
    assert.notEqual(rotated.body.key, key.key);
    assert.notEqual(rotated.body.prefix, key.prefix);
    assert.equal((await call(rotated.body.key, 'GET', '/api/keys/current/')).body.id, key.id);
    assert.equal((await call(key.key, 'GET', '/api/keys/current/')).status, 200, 'the old secret within its grace');
    await refusedSoon(key.key, 10_000);
    assert.equal((await call(rotated.body.key, 'GET', '/api/keys/current/')).status, 200);
    // Without a grace, the old secret stops at once.
    const again = await call(a.key, 'POST', `/api/keys/${key.id}/rotate/`);
    assert.equal(again.status, 200, again.text);
    assert.equal((await call(rotated.body.key, 'GET', '/api/keys/current/')).status, 401);
    const tooLong = await call(a.key, 'POST', `/api/keys/${key.id}/rotate/`, { grace_seconds: 604_801 });
    assert.equal(tooLong.status, 400, tooLong.text);
    assert.equal(tooLong.body.error.param, 'grace_seconds');
  });

  it('stops an expired key as a revoked one', async () => {
    const key = await makeKey(a.key, { name: 'short-lived', expires_at: new Date(Date.now() + 1500).toISOString() });
    assert.equal((await call(key.key, 'GET', '/api/keys/current/')).status, 200);
    await refusedSoon(key.key, 10_000);
  });
});
