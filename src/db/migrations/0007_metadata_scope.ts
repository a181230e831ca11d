/**
 * log_metadata rows carry their log's is_test as well as its timestamp, and the lookup index holds the
 * whole scope: a list filtered by one metadata value counts its matches from this index alone, without
 * reading a log row per match (src/logs/list/list.ts); with the log id last, collecting the matching ids
 * reads the index only. On PostgreSQL, statistics on (key, value) together: without them the planner
 * multiplies the two selectivities and misjudges how many logs a metadata value matches.
 */
import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../dialect.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('log_metadata')
    .addColumn('is_test', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`update log_metadata set is_test = 1 where log_id in (select id from logs where is_test = 1)`.execute(db);
  await db.schema.dropIndex('log_metadata_lookup_idx').execute();
  await db.schema
    .createIndex('log_metadata_lookup_idx')
    .on('log_metadata')
    .columns(['organization_id', 'key', 'value_text', 'timestamp', 'is_test', 'log_id'])
    .execute();
  if (isPostgres(db)) {
    await sql`create statistics log_metadata_key_value (mcv, dependencies) on key, value_text from log_metadata`.execute(
      db,
    );
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) await sql`drop statistics log_metadata_key_value`.execute(db);
  await db.schema.dropIndex('log_metadata_lookup_idx').execute();
  await db.schema.alterTable('log_metadata').dropColumn('is_test').execute();
  await db.schema
    .createIndex('log_metadata_lookup_idx')
    .on('log_metadata')
    .columns(['organization_id', 'key', 'value_text', 'timestamp'])
    .execute();
}
