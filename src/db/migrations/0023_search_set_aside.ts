/**
 * Logs the search indexer set aside (docs/decisions.md "Search: a batch the database refuses"): the
 * database refused the row of their text even alone, so the watermark went past them without it. A search
 * reads these logs directly, as it reads the logs above the watermark, so they are still found; /health
 * counts them. A deleted log, or one whose content retention cleared, leaves this table with its index row.
 */
import type { Kysely } from 'kysely';
import { required } from './columns.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('search_set_aside')
    .addColumn('log_id', 'bigint', (c) => c.primaryKey())
    .$call(required({ error: 'text', set_aside_at: 'bigint' }))
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('search_set_aside').execute();
}
