import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { assertGatelogFails, runGatelog } from '../support/cli.js';

describe('the gatelog CLI, in a child process', () => {
  let database: TestDatabase;
  let env: Record<string, string>;
  before(async () => {
    database = await createTestDatabase();
    env = { GATELOG_DATABASE_URL: database.url, GATELOG_SECRET_KEY: crypto.randomBytes(32).toString('base64') };
  });
  after(() => database.drop());

  const json = async (args: string[]) => {
    const res = await runGatelog([...args, '--json'], env);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout.trim().split('\n').length, 1, 'exactly one JSON object');
    return JSON.parse(res.stdout);
  };
  const fails = (args: string[], message: RegExp) => assertGatelogFails(args, env, message);

  it('migrate applies the migrations once', async () => {
    const first = await json(['migrate']);
    assert.ok(first.applied.includes('0001_foundation'));
    assert.deepEqual(await json(['migrate']), { applied: [] });
  });

  it('orgs create/list', async () => {
    const org = await json(['orgs', 'create', 'acme']);
    assert.deepEqual(Object.keys(org).sort(), ['id', 'name']);
    assert.match(org.id, /^[0-9a-f-]{36}$/);
    assert.equal(org.name, 'acme');
    const listed = await json(['orgs', 'list']);
    assert.ok(listed.results.some((o: { id: string }) => o.id === org.id));
    await fails(['orgs', 'create', 'acme'], /already exists/);
    await fails(['orgs', 'create'], /expected 1 argument/);
  });

  it('keys create/list/revoke, by org name or id, with an owner and --test', async () => {
    const org = await json(['orgs', 'create', 'keys-org']);
    const created = await json([
      'keys',
      'create',
      '--org',
      'keys-org',
      '--name',
      'backend',
      '--email',
      'dev-7@example.com',
      '--first-name',
      'Developer',
      '--last-name',
      'One',
    ]);
    assert.deepEqual(Object.keys(created).sort(), [
      'allowed_models',
      'created_at',
      'expires_at',
      'id',
      'is_test',
      'key',
      'last_used_at',
      'name',
      'organization_id',
      'owner',
      'prefix',
      'rate_limits',
      'revoked_at',
      'scopes',
    ]);
    assert.equal(created.organization_id, org.id);
    assert.equal(created.is_test, false);
    assert.deepEqual(created.rate_limits, { requests_per_minute: null, tokens_per_minute: null }, 'no limits');
    assert.ok(created.key.startsWith(created.prefix));
    const test = await json(['keys', 'create', '--org', org.id, '--name', 'ci', '--test']);
    assert.equal(test.is_test, true);

    const listed = await json(['keys', 'list', '--org', org.id]);
    assert.equal(listed.results.length, 2);
    assert.ok(!JSON.stringify(listed).includes(created.key), 'the secret is never listed');
    const backend = listed.results.find((k: { id: string }) => k.id === created.id);
    assert.deepEqual(backend.owner, { email: 'dev-7@example.com', first_name: 'Developer', last_name: 'One' });
    assert.equal(backend.revoked_at, null);

    const revoked = await json(['keys', 'revoke', created.id]);
    assert.equal(revoked.id, created.id);
    const after = await json(['keys', 'list', '--org', 'keys-org']);
    assert.notEqual(after.results.find((k: { id: string }) => k.id === created.id).revoked_at, null);

    await fails(['keys', 'create', '--org', 'no-such-org', '--name', 'x'], /no organization/);
    await fails(['keys', 'create', '--org', 'keys-org', '--name', 'backend'], /already has a key named/);
    await fails(['keys', 'create', '--org', 'keys-org'], /--name is required/);
    await fails(['keys', 'create', '--org', 'keys-org', '--name', 'y', '--bogus'], /Unknown option '--bogus'/);
    await fails(['keys', 'revoke', crypto.randomUUID()], /no API key/);
  });

  it('providers set/list, masked', async () => {
    await json(['orgs', 'create', 'prov-org']);
    const set = await json([
      'providers',
      'set',
      'openai',
      '--org',
      'prov-org',
      '--api-key',
      'sk-live-abcdefghijkl9876',
      '--base-url',
      'http://127.0.0.1:4010/v1',
    ]);
    assert.equal(set.api_key_preview, 'sk-...9876');
    assert.equal(set.base_url, 'http://127.0.0.1:4010/v1');
    const listed = await json(['providers', 'list', '--org', 'prov-org']);
    assert.equal(listed.results.length, 1);
    assert.equal(listed.results[0].kind, 'openai');
    assert.ok(!JSON.stringify(listed).includes('abcdefghijkl'));
    // A name of the user's own is an OpenAI-compatible server: it needs its address.
    await fails(
      ['providers', 'set', 'nope', '--org', 'prov-org', '--api-key', 'k'],
      /--base-url: 'nope' is not a provider/,
    );
    const own = await json([
      'providers',
      'set',
      'groq',
      '--org',
      'prov-org',
      '--api-key',
      'gsk-abcdefghijkl1234',
      '--base-url',
      'http://127.0.0.1:4011/openai/v1',
      '--models',
      'llama-*,mixtral-8x7b',
      '--key-id',
      'second',
      '--weight',
      '3',
    ]);
    assert.equal(own.kind, 'openai');
    assert.deepEqual(own.models, ['llama-*', 'mixtral-8x7b']);
    assert.deepEqual(
      own.keys.map((k: { key_id: string; weight: number }) => [k.key_id, k.weight]),
      [['second', 3]],
    );
    await fails(['providers', 'set', 'groq', '--org', 'prov-org', '--api-key', 'k', '--weight', 'x'], /--weight/);
    await fails(['providers', 'set', 'openai', '--org', 'prov-org'], /--api-key is required/);
    await fails(['providers', 'list'], /--org is required/);
  });

  it('unknown commands fail on stderr', async () => {
    await fails(['frobnicate'], /unknown command 'frobnicate'/);
    await fails(['orgs', 'delete'], /needs one of: create, list/);
  });
});
