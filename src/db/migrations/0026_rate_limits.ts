/**
 * Rate limits (docs/api.md "Rate limits"): an organization's limits on a customer or on itself
 * (a key's own are on the key, 0025), and the buckets every node draws from — one row per key, customer
 * or organization that has a limit, holding when its requests and its tokens will next be free again.
 */
import type { Kysely } from 'kysely';
import { organizationId, timestamps } from './columns.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('rate_limits')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .$call(organizationId)
    .addColumn('applies_to_type', 'text', (c) => c.notNull())
    .addColumn('applies_to_value', 'text', (c) => c.notNull())
    .addColumn('requests_per_minute', 'integer')
    .addColumn('tokens_per_minute', 'integer')
    .$call(timestamps)
    .execute();
  await db.schema
    .createIndex('rate_limits_applies_to_idx')
    .on('rate_limits')
    .columns(['organization_id', 'applies_to_type', 'applies_to_value'])
    .unique()
    .execute();
  // Times are epoch milliseconds with fractions: a limit of 7 requests a minute frees one every 8571.43 ms.
  await db.schema
    .createTable('rate_buckets')
    .addColumn('bucket', 'text', (c) => c.primaryKey())
    .addColumn('requests_at', 'double precision', (c) => c.notNull())
    .addColumn('tokens_at', 'double precision', (c) => c.notNull())
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('rate_buckets').execute();
  await db.schema.dropTable('rate_limits').execute();
}
