/** Organizations, API keys and the provider credentials area (issue: first landing). */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('organizations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('is_test', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('owner_email', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('owner_first_name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('owner_last_name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .addUniqueConstraint('api_keys_org_name_unique', ['organization_id', 'name'])
    .execute();
  await db.schema.createIndex('api_keys_prefix_idx').on('api_keys').column('prefix').execute();

  await db.schema
    .createTable('provider_credentials')
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('api_key_encrypted', 'text', (c) => c.notNull())
    .addColumn('api_key_preview', 'text', (c) => c.notNull())
    .addColumn('base_url', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('provider_credentials_pk', ['organization_id', 'provider'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('provider_credentials').execute();
  await db.schema.dropTable('api_keys').execute();
  await db.schema.dropTable('organizations').execute();
}
