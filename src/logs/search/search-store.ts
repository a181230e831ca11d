/**
 * The search index's SQL, per dialect (migrations/0017_search.ts): `log_search` is an FTS5 table on
 * SQLite (rowid = log id) and a table with a pg_trgm GIN index on PostgreSQL (log_id).
 */
import { type Kysely, type RawBuilder, type SqlBool, sql } from 'kysely';
import type { DialectName } from '../../db/connect.js';
import type { Database } from '../../db/schema.js';
import { isPostgres, oneOf } from '../../db/dialect.js';
import { stopPoint } from '../../db/stop-point.js';
import { ftsMatch } from './fts-match.js';
import { SEARCH_COLUMNS, SEARCH_FIELD_CHARS } from './search-text.js';

/** The highest log id below which every log is indexed. */
export async function readWatermark(db: Kysely<Database>): Promise<number> {
  const row = await db.selectFrom('search_watermark').select('log_id').where('name', '=', 'logs').executeTakeFirst();
  return Number(row?.log_id ?? 0);
}

/**
 * The search columns of `logs` as searchText reads them: each one's first SEARCH_FIELD_CHARS characters
 * and one more, which tells a cut field from a whole one. PostgreSQL reads only that slice of a long
 * value; SQLite reads the value but hands over the prefix alone.
 */
export const searchSourceColumns = () =>
  SEARCH_COLUMNS.map((column) =>
    sql<string | null>`substr(${sql.ref(`logs.${column}`)}, 1, ${sql.lit(SEARCH_FIELD_CHARS + 1)})`.as(column),
  );

/** Stores these logs' texts (replacing any they had). */
export async function writeSearchRows(
  db: Kysely<Database>,
  dialect: DialectName,
  rows: readonly { id: number; text: string }[],
): Promise<void> {
  if (rows.length === 0) return;
  if (dialect === 'postgres') {
    // Idempotent: two nodes indexing the same logs (only ever after a lost lock) write the same text.
    const values = sql.join(rows.map((r) => sql`(${r.id}, ${r.text})`));
    await sql`insert into log_search (log_id, text) values ${values}
      on conflict (log_id) do update set text = excluded.text`.execute(db);
    return;
  }
  const ids = rows.map((r) => r.id);
  await sql`delete from log_search where rowid in (select value from json_each(${JSON.stringify(ids)}))`.execute(db);
  // One statement for the whole batch. Inside a transaction FTS5 writes its pending terms out as a new
  // segment whenever a statement that may write several rows ends (its statement savepoint), so inserts
  // of 200 rows each made many small segments a batch, and merging them took most of the fill: 2M logs
  // filled in 574 s that way, 83 s now (bench/README.md "10M logs over 30 days on SQLite").
  const pairs = JSON.stringify(rows.map((r) => [r.id, r.text]));
  await sql`insert into log_search (rowid, text) select value ->> 0, value ->> 1 from json_each(${pairs})`.execute(db);
}

/**
 * Takes these logs out of the index (and out of the logs set aside): a deleted log, or one whose words
 * were cleared (content retention). A log whose text is cleared is not searched again (its text is gone
 * from the log too).
 */
export async function clearSearchText(db: Kysely<Database>, logIds: readonly number[]): Promise<void> {
  if (logIds.length === 0) return;
  const dialect = isPostgres(db) ? 'postgres' : 'sqlite';
  const logId = sql.ref(dialect === 'postgres' ? 'log_id' : 'rowid');
  await sql`delete from log_search where ${oneOf(dialect, logId, logIds)}`.execute(db);
  await db
    .deleteFrom('search_set_aside')
    .where(oneOf(dialect, sql.ref('log_id'), logIds))
    .execute();
}

/** Notes logs whose text the database would not index (searched directly from now on). */
export async function setAside(db: Kysely<Database>, logs: readonly { id: number; error: string }[]): Promise<void> {
  if (logs.length === 0) return;
  const now = Date.now();
  await db
    .insertInto('search_set_aside')
    .values(logs.map((l) => ({ log_id: l.id, error: l.error, set_aside_at: now })))
    .onConflict((oc) => oc.column('log_id').doUpdateSet((eb) => ({ error: eb.ref('excluded.error') })))
    .execute();
}

/** How many logs are set aside. */
export async function countSetAside(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('search_set_aside')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

const likePattern = (term: string) => `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * The logs up to `watermark` whose indexed text holds every term (lower-cased, at least one): a condition
 * on `logId`. Terms of three characters or more go through the trigram index (on SQLite as fts-match.ts
 * shapes them); shorter ones are tested on the text of the logs the others found, or of each log of the
 * list's range when all are short.
 */
export function indexedMatch(
  dialect: DialectName,
  logId: RawBuilder<unknown>,
  watermark: number,
  terms: readonly string[],
): RawBuilder<SqlBool> {
  if (dialect === 'postgres') {
    const likes = sql.join(
      terms.map((t) => sql`s.text like ${likePattern(t)}`),
      sql` and `,
    );
    // One form for both: the planner reads the GIN index for selective terms and probes the primary key
    // per log of the range otherwise.
    return sql<SqlBool>`(${logId} <= ${watermark} and exists (select 1 from log_search as s where s.log_id = ${logId} and ${likes}))`;
  }
  const { match, checked } = ftsMatch(terms);
  // Each log's check reads its whole text: the stop point first, so that a read past its budget ends
  // at the next log (src/db/stop-point.ts).
  const instr = sql.join([stopPoint(), ...checked.map((t) => sql`instr(s.text, ${t}) > 0`)], sql` and `);
  if (match !== null) {
    const rest = checked.length > 0 ? sql` and ${instr}` : sql``;
    return sql<SqlBool>`${logId} in (select s.rowid from log_search as s where s.text match ${match} and s.rowid <= ${watermark}${rest})`;
  }
  return sql<SqlBool>`(${logId} <= ${watermark} and exists (select 1 from log_search as s where s.rowid = ${logId} and ${instr}))`;
}
