/**
 * `gatelog keys create` with a key's settings (docs/api.md "Keys"): scopes,
 * allowed models, expiry and rate limits, the same a key made over HTTP has — and the key they make is
 * held to them by the server.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { runGatelog } from '../support/cli.js';
import { api, startApp, type TestApp } from '../support/harness.js';

describe('gatelog keys create with settings', () => {
  let t: TestApp;
  let org: string;
  before(async () => {
    t = await startApp();
    org = (await t.tenant()).org.id;
  });
  after(async () => t.close());

  // The CLI works on the app's database directly (keys need no secret key: only provider keys are sealed).
  const cli = (args: string[]) =>
    runGatelog(args, { GATELOG_DATABASE_URL: t.database.url, GATELOG_SECRET_KEY: t.secretKey.toString('hex') });

  it('makes a key with scopes, models and expiry that the server holds it to', async () => {
    const res = await cli([
      'keys',
      'create',
      '--org',
      org,
      '--name',
      'dev-ann',
      '--scopes',
      'models,read',
      '--allow-model',
      'gpt-4o*',
      '--allow-model',
      'openai/*,o3',
      '--expires',
      '30d',
      '--json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    const key = JSON.parse(res.stdout);
    assert.deepEqual(key.scopes, ['models', 'read']);
    assert.deepEqual(key.allowed_models, ['gpt-4o*', 'openai/*', 'o3']);
    const days = (Date.parse(key.expires_at) - Date.now()) / 86_400_000;
    assert.ok(days > 29.9 && days <= 30, `expires in ${days} days`);
    const current = await api(t.baseUrl, 'GET', '/api/keys/current/', { key: key.key });
    assert.equal(current.status, 200, current.text);
    assert.deepEqual(current.body.scopes, ['models', 'read']);
    assert.equal((await api(t.baseUrl, 'GET', '/api/provider-keys/', { key: key.key })).status, 403);
    const listed = await cli(['keys', 'list', '--org', org]);
    assert.match(listed.stdout, new RegExp(`${key.id}\\tdev-ann\\t.*\\tlive\\tmodels,read`));
  });

  it('refuses settings it cannot hold, naming the flag', async () => {
    for (const [extra, message] of [
      [['--scopes', 'models,write'], /--scopes: 'write' is not a scope/],
      [['--scopes', ''], /--scopes: name at least one/],
      [['--expires', 'tomorrow'], /--expires: 'tomorrow'/],
      [['--expires', '2001-01-01T00:00:00Z'], /not in the future/],
      [['--test', '--scopes', 'admin'], /test key cannot hold the admin scope/],
    ] as const) {
      const res = await cli(['keys', 'create', '--org', org, '--name', `k-${crypto.randomUUID()}`, ...extra]);
      assert.equal(res.code, 1, `${extra.join(' ')}: ${res.stdout}`);
      assert.match(res.stderr, message);
    }
  });
});
