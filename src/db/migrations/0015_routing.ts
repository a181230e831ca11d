/**
 * Retries, fallbacks and the response cache on a log (docs/api.md "Retries and fallbacks", "Response
 * cache"): the tries before the one that answered (JSON text), whether a fallback model answered, and
 * whether the answer came from the cache. Both flags are filters.
 */
import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('logs').addColumn('attempts', 'text').execute();
  await db.schema
    .alterTable('logs')
    .addColumn('fallback_used', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('logs')
    .addColumn('cache_hit', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  for (const column of ['attempts', 'fallback_used', 'cache_hit']) {
    await db.schema.alterTable('logs').dropColumn(column).execute();
  }
}
