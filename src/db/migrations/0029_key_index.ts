/**
 * An index for filters on api_key_id: a key's calls (a key budget's calls, refusals and spenders, one
 * click from the Budgets and Keys pages). Shaped as the customer's index (0006): the timestamp next, so a
 * count over a range reads the index only, and the id last for paging.
 */
import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('logs_key_idx')
    .on('logs')
    .columns(['organization_id', 'is_test', 'api_key_id', 'timestamp', 'id'])
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('logs_key_idx').execute();
}
