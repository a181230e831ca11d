/**
 * Providers by name (docs/api.md "Providers"): an organization registers named upstreams — OpenAI,
 * Anthropic, Azure OpenAI, or any OpenAI-compatible server — each with its kind, base URL, the models it
 * serves and one or more weighted keys. The one-key-per-provider table it replaces is copied over: each
 * of its rows becomes a provider of kind `openai` with one key, `default`, whose sealed bytes are kept
 * as they are (a key's associated data for `default` is what it was).
 */
import { type Kysely, sql } from 'kysely';
import { createProviderCredentials, organizationId, required, timestamps } from './columns.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('providers')
    .$call(organizationId)
    .$call(required({ name: 'text', kind: 'text' }))
    .addColumn('base_url', 'text')
    /** JSON array of model names and `prefix*` patterns, or null: only by name or built-in family. */
    .addColumn('models', 'text')
    .addColumn('api_version', 'text')
    .$call(timestamps)
    .addPrimaryKeyConstraint('providers_pk', ['organization_id', 'name'])
    .execute();
  await db.schema
    .createTable('provider_keys')
    .$call(required({ organization_id: 'text', provider: 'text', key_id: 'text' }))
    .$call(required({ api_key_encrypted: 'text', api_key_preview: 'text', weight: 'double precision' }))
    .$call(timestamps)
    .addPrimaryKeyConstraint('provider_keys_pk', ['organization_id', 'provider', 'key_id'])
    .addForeignKeyConstraint(
      'provider_keys_provider_fk',
      ['organization_id', 'provider'],
      'providers',
      ['organization_id', 'name'],
      (fk) => fk.onDelete('cascade'),
    )
    .execute();
  await sql`
    insert into providers (organization_id, name, kind, base_url, models, api_version, created_at, updated_at)
    select organization_id, provider, 'openai', base_url, null, null, created_at, updated_at from provider_credentials
  `.execute(db);
  await sql`
    insert into provider_keys
      (organization_id, provider, key_id, api_key_encrypted, api_key_preview, weight, created_at, updated_at)
    select organization_id, provider, 'default', api_key_encrypted, api_key_preview, 1, created_at, updated_at
    from provider_credentials
  `.execute(db);
  await db.schema.dropTable('provider_credentials').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  await createProviderCredentials(db);
  await sql`
    insert into provider_credentials
      (organization_id, provider, api_key_encrypted, api_key_preview, base_url, created_at, updated_at)
    select k.organization_id, k.provider, k.api_key_encrypted, k.api_key_preview, p.base_url, k.created_at, k.updated_at
    from provider_keys k join providers p on p.organization_id = k.organization_id and p.name = k.provider
    where k.key_id = 'default' and p.kind = 'openai'
  `.execute(db);
  await db.schema.dropTable('provider_keys').execute();
  await db.schema.dropTable('providers').execute();
}
