/**
 * A kind's own options (docs/api.md "Provider keys", "Provider kinds"): GET /api/provider-kinds/ lists the
 * kinds of the registry with their options' JSON Schema; a registration's option is checked by its kind's
 * schema, a bad one a 400 naming the field; and the migration that moved Azure's api_version column
 * into the per-provider options keeps every version registered before, and gives it back when undone.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import * as optionsMigration from '../../src/db/migrations/0024_provider_options.js';
import { listProviderKeys, loadProviders } from '../../src/providers/credentials.js';
import { BUILT_IN_PROVIDER_KINDS } from '../../src/providers/registry.js';
import { createTestDatabase } from '../support/database.js';
import { api, startAppWithTenant, type TestApp } from '../support/harness.js';

describe('provider kinds and their options through the API', () => {
  let t: TestApp;
  let key: string;
  before(async () => ([t, { key }] = await startAppWithTenant()));
  after(() => t.close());

  it('lists the kinds in order with their routes, families and options', async () => {
    const res = await api(t.baseUrl, 'GET', '/api/provider-kinds/', { key });
    assert.equal(res.status, 200, res.text);
    const kinds = res.body.results as Record<string, unknown>[];
    assert.deepEqual(
      kinds.map((k) => [k.kind, k.routes, k.base_url_required]),
      [
        ['openai', ['chat', 'responses', 'embeddings', 'transcription'], false],
        ['anthropic', ['chat', 'messages'], false],
        ['azure', ['chat', 'embeddings', 'transcription'], true],
      ],
    );
    const azure = kinds[2];
    assert.equal(azure.label, 'Azure OpenAI');
    const options = azure.options as { properties: Record<string, Record<string, unknown>>; required?: string[] };
    assert.deepEqual(Object.keys(options.properties), ['api_version']);
    assert.equal(options.properties.api_version.type, 'string');
    assert.equal(options.properties.api_version.title, 'API version');
    assert.equal(options.required, undefined, 'api_version may be left out');
    assert.deepEqual((kinds[1].options as { properties: object }).properties, {});
    assert.ok((kinds[1].model_families as string[]).some((f) => new RegExp(f).test('claude-sonnet-4-5')));
    assert.equal((await api(t.baseUrl, 'GET', '/api/provider-kinds/')).status, 401);
  });

  it('refuses a bad option with a 400 naming it, and stores nothing', async () => {
    const tenant = await t.tenant();
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ provider: 'anthropic', api_key: 'sk-ant-x', api_version: '2024-06-01' }, 'api_version', /Azure OpenAI/],
      [
        {
          provider: 'azure',
          api_key: 'k-x',
          base_url: 'https://contoso.openai.azure.com',
          api_version: 'v'.repeat(65),
        },
        'api_version',
        /api_version/,
      ],
      [
        { provider: 'azure', api_key: 'k-x', base_url: 'https://contoso.openai.azure.com', api_version: 7 },
        'api_version',
        /api_version/,
      ],
    ];
    for (const [body, param, message] of cases) {
      const res = await api(t.baseUrl, 'POST', '/api/provider-keys/', { key: tenant.key, body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.error.param, param);
      assert.match(res.body.error.message, message);
    }
    assert.deepEqual((await api(t.baseUrl, 'GET', '/api/provider-keys/', { key: tenant.key })).body, { results: [] });
  });

  it('replaces the options with what a later registration gives (null: none)', async () => {
    const body = { provider: 'azure', api_key: 'k-azure-0001', base_url: 'https://contoso.openai.azure.com' };
    const first = await api(t.baseUrl, 'POST', '/api/provider-keys/', {
      key,
      body: { ...body, api_version: '2024-06-01' },
    });
    assert.equal(first.body.api_version, '2024-06-01');
    const second = await api(t.baseUrl, 'POST', '/api/provider-keys/', { key, body: { ...body, api_version: null } });
    assert.equal(second.status, 201, second.text);
    assert.equal(second.body.api_version, null);
  });
});

describe('the migration of api_version into the options', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let db: ReturnType<typeof connect>['db'];
  const secret = Buffer.alloc(32, 3);
  before(async () => {
    database = await createTestDatabase();
    db = connect(database.target).db;
    await migrateToLatest(db, '0023_search_set_aside');
    const now = Date.now();
    await sql`insert into organizations (id, name, created_at) values ('org-1', 'one', ${now})`.execute(db);
    for (const [name, kind, version] of [
      ['contoso', 'azure', '2024-06-01'],
      ['azure-eu', 'azure', null],
      ['openai', 'openai', null],
    ]) {
      await sql`
        insert into providers (organization_id, name, kind, base_url, models, api_version, created_at, updated_at)
        values ('org-1', ${name}, ${kind}, 'https://contoso.openai.azure.com', null, ${version}, ${now}, ${now})
      `.execute(db);
    }
  });
  after(async () => {
    await db.destroy();
    await database.drop();
  });

  it('keeps each version as the option, and the view shows it as before', async () => {
    assert.deepEqual(await migrateToLatest(db, '0024_provider_options'), ['0024_provider_options']);
    const loaded = await loadProviders(db, secret, 'org-1');
    assert.deepEqual(
      loaded.map((p) => [p.name, p.options]),
      [
        ['azure-eu', {}],
        ['contoso', { api_version: '2024-06-01' }],
        ['openai', {}],
      ],
    );
    const views = await listProviderKeys(db, 'org-1', BUILT_IN_PROVIDER_KINDS);
    assert.deepEqual(
      views.map((v) => [v.provider, v.api_version]),
      [
        ['azure-eu', null],
        ['contoso', '2024-06-01'],
        ['openai', null],
      ],
    );
  });

  it('gives the column back when undone', async () => {
    await optionsMigration.down(db);
    const rows = await sql<{ name: string; api_version: string | null }>`
      select name, api_version from providers order by name
    `.execute(db);
    assert.deepEqual(
      rows.rows.map((r) => [r.name, r.api_version]),
      [
        ['azure-eu', null],
        ['contoso', '2024-06-01'],
        ['openai', null],
      ],
    );
  });
});
