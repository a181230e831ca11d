/**
 * The bench store's search index, filled as a server that has been running has it (caught up). A large
 * backlog on PostgreSQL — a freshly seeded store — is filled with the trigram index dropped and made
 * again after: one sort of the whole table instead of a GIN insert per row (the pending list flushed
 * over and over), as the bulk seed does for the logs' own indexes. SQLite's FTS5 table has no index apart
 * from its table, so it is filled as it is.
 */
import { type Kysely, sql } from 'kysely';
import type { DbHandle } from '../src/db/connect.js';
import type { Database } from '../src/db/schema.js';
import { SearchIndexer } from '../src/logs/search/indexer.js';

/** Above this many logs waiting, PostgreSQL's trigram index is dropped during the fill. */
const REBUILD_BACKLOG = 500_000;

/** Logs above the search index's watermark. */
export async function searchBacklog(db: Kysely<Database>): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*) as n from logs
    where id > coalesce((select log_id from search_watermark where name = 'logs'), 0)`.execute(db);
  return Number(rows[0].n);
}

/** The trigram index as migration 0017 makes it. */
const TRIGRAM_INDEX = sql`create index log_search_trgm on log_search using gin (text gin_trgm_ops)`;

/** Fills the search index up to the last log; returns how many logs it indexed. */
export async function fillSearchIndex(handle: DbHandle): Promise<number> {
  // No writer waits on it here: large transactions.
  const indexer = new SearchIndexer(handle, null, null, { batchSize: 5000, batchTextChars: 16 * 1024 * 1024 });
  const postgres = handle.dialect === 'postgres';
  if (postgres && (await searchBacklog(handle.db)) > REBUILD_BACKLOG && (await hasTrigramIndex(handle.db))) {
    await sql`drop index log_search_trgm`.execute(handle.db);
    console.log('search index: its trigram index dropped for the fill (a large backlog)');
  }
  await indexer.catchUp();
  // Made again here, also after a fill that was stopped midway.
  if (postgres && !(await hasTrigramIndex(handle.db))) {
    const started = performance.now();
    await handle.db.connection().execute(async (db) => {
      // One session: the settings hold for the statement after them (the main pool's statement_timeout
      // is a minute; this index takes longer at 10M logs).
      await sql`set maintenance_work_mem = '1GB'`.execute(db);
      await sql`set statement_timeout = 0`.execute(db);
      await TRIGRAM_INDEX.execute(db);
    });
    console.log(`search index: trigram index made in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  }
  return indexer.indexed;
}

async function hasTrigramIndex(db: Kysely<Database>): Promise<boolean> {
  const { rows } = await sql<{ name: string | null }>`select to_regclass('log_search_trgm')::text as name`.execute(db);
  return rows[0].name !== null;
}
