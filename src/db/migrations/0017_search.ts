/**
 * Full-text search over what a log says (docs/api.md "Filter language", `search`; docs/decisions.md
 * "Search index"). The index lives beside the logs, never on them: `log_search` holds one row per
 * indexed log (its id and its lower-cased words), filled by a background indexer
 * (src/logs/search/indexer.ts) off the write path, and `search_watermark` the highest log id below
 * which every log is indexed. A search reads the index up to the watermark and the logs above it
 * directly, so it is always complete.
 *
 * SQLite: an FTS5 table with the trigram tokenizer (case-sensitive: the text is lower-cased already,
 * with JavaScript's Unicode-aware toLowerCase). PostgreSQL: a table with a pg_trgm GIN index.
 */
import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../dialect.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await sql`create extension if not exists pg_trgm`.execute(db);
    // The cascade drops a deleted log's words with it; no cost on insert.
    await sql`create table log_search (
      log_id bigint primary key references logs(id) on delete cascade,
      text text not null
    )`.execute(db);
    await sql`create index log_search_trgm on log_search using gin (text gin_trgm_ops)`.execute(db);
  } else {
    // rowid = the log's id.
    await sql`create virtual table log_search using fts5(text, tokenize = 'trigram case_sensitive 1')`.execute(db);
  }
  await db.schema
    .createTable('search_watermark')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('log_id', 'bigint', (c) => c.notNull())
    .execute();
  await db.insertInto('search_watermark').values({ name: 'logs', log_id: 0 }).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('search_watermark').execute();
  await sql`drop table log_search`.execute(db);
}
