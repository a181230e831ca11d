import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { api, startApp, type TestApp } from '../support/harness.js';

const FULL_KEY = 'sk-proj-THISISTHEWHOLESECRET-0123456789abcd';

describe('the credentials area: /api/provider-keys/', () => {
  let t: TestApp;
  before(async () => (t = await startApp()));
  after(() => t.close());

  it('creates, lists, replaces and deletes a provider key, showing only a preview', async () => {
    const { key } = await t.tenant();
    const created = await api(t.baseUrl, 'POST', '/api/provider-keys/', {
      key,
      body: { provider: 'openai', api_key: FULL_KEY },
    });
    assert.equal(created.status, 201);
    assert.deepEqual(Object.keys(created.body).sort(), [
      'api_key_preview',
      'api_version',
      'base_url',
      'created_at',
      'keys',
      'kind',
      'models',
      'provider',
      'updated_at',
    ]);
    assert.equal(created.body.kind, 'openai');
    assert.equal(created.body.keys.length, 1);
    assert.equal(created.body.keys[0].key_id, 'default');
    assert.equal(created.body.provider, 'openai');
    assert.equal(created.body.api_key_preview, 'sk-...abcd');
    assert.equal(created.body.base_url, null);
    assert.match(created.body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const replaced = await api(t.baseUrl, 'POST', '/api/provider-keys/', {
      key,
      body: { provider: 'openai', api_key: 'sk-second-key-wxyz', base_url: 'http://127.0.0.1:9/v1/' },
    });
    assert.equal(replaced.status, 201);
    assert.equal(replaced.body.api_key_preview, 'sk-...wxyz');
    assert.equal(replaced.body.base_url, 'http://127.0.0.1:9/v1');
    assert.equal(replaced.body.created_at, created.body.created_at);
    assert.equal(replaced.body.keys.length, 1, 'the one key replaced, not a second added');

    const listed = await api(t.baseUrl, 'GET', '/api/provider-keys/', { key });
    assert.equal(listed.status, 200);
    assert.equal(listed.body.results.length, 1);
    assert.deepEqual(listed.body.results[0], replaced.body);

    const deleted = await api(t.baseUrl, 'DELETE', '/api/provider-keys/openai/', { key });
    assert.equal(deleted.status, 204);
    assert.equal(deleted.text, '');
    const empty = await api(t.baseUrl, 'GET', '/api/provider-keys/', { key });
    assert.deepEqual(empty.body, { results: [] });
    const again = await api(t.baseUrl, 'DELETE', '/api/provider-keys/openai/', { key });
    assert.equal(again.status, 404);
    assert.equal(again.body.error.type, 'not_found_error');
  });

  it("keeps another organization's provider key invisible", async () => {
    const a = await t.tenant();
    const b = await t.tenant();
    await api(t.baseUrl, 'POST', '/api/provider-keys/', {
      key: a.key,
      body: { provider: 'openai', api_key: FULL_KEY },
    });
    const listed = await api(t.baseUrl, 'GET', '/api/provider-keys/', { key: b.key });
    assert.deepEqual(listed.body, { results: [] });
    const deleted = await api(t.baseUrl, 'DELETE', '/api/provider-keys/openai/', { key: b.key });
    assert.equal(deleted.status, 404);
    const stillThere = await api(t.baseUrl, 'GET', '/api/provider-keys/', { key: a.key });
    assert.equal(stillThere.body.results.length, 1);
  });

  it('rejects bad bodies with a 400 naming the field', async () => {
    const { key } = await t.tenant();
    const cases: [unknown, string][] = [
      [{ provider: 'openai' }, 'api_key'],
      [{ provider: 'openai', api_key: '' }, 'api_key'],
      [{ provider: 'openai', api_key: 42 }, 'api_key'],
      [{ provider: 'nope', api_key: 'sk-x' }, 'base_url'],
      [{ provider: 'has/slash', api_key: 'sk-x', base_url: 'http://127.0.0.1:9' }, 'provider'],
      [{ provider: 'x', api_key: 'sk-x', base_url: 'http://127.0.0.1:9', kind: 'bedrock' }, 'kind'],
      [{ provider: 'azure', api_key: 'sk-x' }, 'base_url'],
      [{ provider: 'openai', api_key: 'sk-x', api_version: '2024-10-21' }, 'api_version'],
      [{ provider: 'openai', api_key: 'sk-x', models: ['gpt *'] }, 'models.0'],
      [{ provider: 'openai', api_key: 'sk-x', models: ['ok', 'a*b*'] }, 'models.1'],
      [{ provider: 'openai', api_key: 'sk-x', key_id: 'a b' }, 'key_id'],
      [{ provider: 'openai', api_key: 'sk-x', weight: 0 }, 'weight'],
      [{ provider: 'openai', api_key: 'sk-x', weight: -1 }, 'weight'],
      [{ api_key: 'sk-x' }, 'provider'],
      [{ provider: 'openai', api_key: 'sk-x', base_url: 'ftp://x' }, 'base_url'],
    ];
    for (const [body, param] of cases) {
      const res = await api(t.baseUrl, 'POST', '/api/provider-keys/', { key, body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.error.type, 'invalid_request_error');
      assert.equal(res.body.error.param, param, JSON.stringify(body));
      assert.equal(res.body.detail, res.body.error.message);
    }
    const listed = await api(t.baseUrl, 'GET', '/api/provider-keys/', { key });
    assert.deepEqual(listed.body, { results: [] });
  });

  it('never stores or returns the full key', async () => {
    const { key } = await t.tenant();
    const responses = [
      await api(t.baseUrl, 'POST', '/api/provider-keys/', { key, body: { provider: 'openai', api_key: FULL_KEY } }),
      await api(t.baseUrl, 'GET', '/api/provider-keys/', { key }),
    ];
    for (const res of responses) assert.ok(!res.text.includes('THISISTHEWHOLESECRET'));

    const rows = await sql<{ dump: string }>`select * from provider_keys`.execute(t.db.db);
    assert.ok(!JSON.stringify(rows.rows).includes('THISISTHEWHOLESECRET'));
    if (t.config.database.kind === 'sqlite') {
      await sql`pragma wal_checkpoint(TRUNCATE)`.execute(t.db.db);
      const bytes = fs.readFileSync(t.config.database.path);
      assert.ok(bytes.includes(Buffer.from('sk-...abcd')), 'the preview is in the file, so the scan reads real data');
      assert.ok(!bytes.includes(Buffer.from('THISISTHEWHOLESECRET')));
    }
  });
});
