/**
 * `gatelog keys create` with a key's settings (docs/api.md "Keys"): scopes,
 * allowed models, expiry and rate limits, the same a key made over HTTP has — and the key they make is
 * held to them by the server.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { runGatelog } from '../support/cli.js';
import { api, type TestApp } from '../support/harness.js';
import { openAIClientOf, type ProxyTestApp, startProxyApp } from '../support/proxy-app.js';

describe('gatelog keys create with settings', () => {
  // In front of the fake provider, with a provider key: a key the CLI makes can call models.
  let p: ProxyTestApp;
  let t: TestApp;
  let org: string;
  before(async () => {
    p = await startProxyApp();
    t = p.t;
    org = p.a.org.id;
  });
  after(async () => p.close());

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
      'dev-7',
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
    assert.match(listed.stdout, new RegExp(`${key.id}\\tdev-7\\t.*\\tlive\\tmodels,read`));
  });

  it('makes a key with rate limits that read back over HTTP and refuse the call beyond them', async () => {
    const res = await cli(['keys', 'create', '--org', org, '--name', 'two-a-minute', '--rpm', '2', '--tpm', '100000']);
    assert.equal(res.code, 0, res.stderr);
    const secret = res.stdout.trim();
    const current = await api(t.baseUrl, 'GET', '/api/keys/current/', { key: secret });
    assert.equal(current.status, 200, current.text);
    assert.deepEqual(current.body.rate_limits, { requests_per_minute: 2, tokens_per_minute: 100_000 });

    const client = openAIClientOf(t, secret);
    const ask = () =>
      client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    await ask();
    await ask();
    const forwarded = p.fake.chats.length;
    const err = await ask().then(
      () => assert.fail('the third call in a minute was not refused'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof OpenAI.RateLimitError, String(err));
    assert.equal(err.code, 'rate_limited');
    assert.match(err.message, /this key: 2 requests per minute/);
    assert.equal(p.fake.chats.length, forwarded, 'nothing was forwarded');

    const listed = await cli(['keys', 'list', '--org', org, '--json']);
    assert.equal(listed.code, 0, listed.stderr);
    const results: { id: string; rate_limits: unknown }[] = JSON.parse(listed.stdout).results;
    assert.deepEqual(results.find((k) => k.id === current.body.id)?.rate_limits, {
      requests_per_minute: 2,
      tokens_per_minute: 100_000,
    });
    const text = await cli(['keys', 'list', '--org', org]);
    assert.match(
      text.stdout,
      new RegExp(`${current.body.id}\\ttwo-a-minute\\t.*\\tlive\\t\\S+\\trpm=2 tpm=100000$`, 'm'),
    );
    // A key without limits shows no column for them.
    assert.match(text.stdout, new RegExp(`${p.a.keyId}\\t[^\\n]*\\tmodels,ingest,read,admin$`, 'm'));

    const rpmOnly = await cli(['keys', 'create', '--org', org, '--name', 'rpm-only', '--rpm', '60', '--json']);
    assert.equal(rpmOnly.code, 0, rpmOnly.stderr);
    assert.deepEqual(JSON.parse(rpmOnly.stdout).rate_limits, { requests_per_minute: 60, tokens_per_minute: null });
  });

  it('refuses settings it cannot hold, naming the flag', async () => {
    for (const [extra, message] of [
      [['--scopes', 'models,write'], /--scopes: 'write' is not a scope/],
      [['--scopes', ''], /--scopes: name at least one/],
      [['--expires', 'tomorrow'], /--expires: 'tomorrow'/],
      [['--expires', '2001-01-01T00:00:00Z'], /not in the future/],
      [['--test', '--scopes', 'admin'], /test key cannot hold the admin scope/],
      [['--rpm', 'ten'], /--rpm: 'ten' is not a whole number/],
      [['--rpm', '0'], /--rpm: '0' is not a whole number from 1/],
      [['--rpm', '1.5'], /--rpm: '1.5'/],
      [['--tpm=-5'], /--tpm: '-5'/],
      [['--tpm', '2000000000'], /--tpm: '2000000000' is not a whole number from 1 to 1000000000/],
    ] as const) {
      const res = await cli(['keys', 'create', '--org', org, '--name', `k-${crypto.randomUUID()}`, ...extra]);
      assert.equal(res.code, 1, `${extra.join(' ')}: ${res.stdout}`);
      assert.match(res.stderr, message);
    }
  });
});
