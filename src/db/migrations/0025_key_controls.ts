/**
 * Keys that can be handed out (docs/api.md "Keys"): each key has scopes, a list
 * of allowed models, an expiry, rate limits and when it was last used, and a rotated key keeps its
 * previous secret for a grace period. Keys made before keep every scope, except test keys, which never
 * hold `admin`.
 */
import { type Kysely, sql } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('api_keys')
    .addColumn('scopes', 'text', (c) => c.notNull().defaultTo('["models","ingest","read","admin"]'))
    .execute();
  await sql`update api_keys set scopes = '["models","ingest","read"]' where is_test = 1`.execute(db);
  await db.schema
    .alterTable('api_keys')
    .addColumn('allowed_models', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
  await db.schema.alterTable('api_keys').addColumn('expires_at', 'bigint').execute();
  await db.schema
    .alterTable('api_keys')
    .addColumn('rate_limits', 'text', (c) => c.notNull().defaultTo('{}'))
    .execute();
  await db.schema.alterTable('api_keys').addColumn('last_used_at', 'bigint').execute();
  await db.schema.alterTable('api_keys').addColumn('previous_prefix', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('previous_key_hash', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('previous_valid_until', 'bigint').execute();
  await db.schema.createIndex('api_keys_previous_prefix_idx').on('api_keys').column('previous_prefix').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('api_keys_previous_prefix_idx').execute();
  for (const column of [
    'previous_valid_until',
    'previous_key_hash',
    'previous_prefix',
    'last_used_at',
    'rate_limits',
    'expires_at',
    'allowed_models',
    'scopes',
  ]) {
    await db.schema.alterTable('api_keys').dropColumn(column).execute();
  }
}
