/** Organizations, API keys and the provider credentials area (issue: first landing). */
import type { Kysely } from 'kysely';
import { createProviderCredentials, defaulted, ownedRecords, required } from './columns.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('organizations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await ownedRecords(db, 'api_keys')
    .$call(required({ name: 'text', prefix: 'text' }))
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .$call(defaulted('integer', 0, ['is_test']))
    .$call(defaulted('text', '', ['owner_email', 'owner_first_name', 'owner_last_name']))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .addUniqueConstraint('api_keys_org_name_unique', ['organization_id', 'name'])
    .execute();
  await db.schema.createIndex('api_keys_prefix_idx').on('api_keys').column('prefix').execute();

  await createProviderCredentials(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('provider_credentials').execute();
  await db.schema.dropTable('api_keys').execute();
  await db.schema.dropTable('organizations').execute();
}
