/**
 * Indexes for sessions (docs/api.md "Sessions"), both partial: only logs with a thread_identifier are in
 * them, so the many logs outside any session cost nothing more to store.
 *
 * - logs_session_time_idx: a window's session logs in time order, with every column a session sums,
 *   so the sessions of a window are one read of this index and a GROUP BY, no log row read.
 * - logs_thread_idx: one session's logs — its calls (the list filtered by thread_identifier, oldest
 *   first) and the models, keys and customers of a page of sessions. Shaped as the customer's index
 *   (0006): the timestamp next, the id last for paging.
 *
 * On SQLite the time index's condition is written `+thread_identifier is not null`, and the sessions'
 * read says exactly that (src/logs/sessions/sessions.ts): a condition that implies this index's and not
 * the thread index's. Written plainly, SQLite's planner read a wide window through the thread index
 * (`thread_identifier > NULL`, which it takes for a narrow range), row by row: 3–4× slower on 7 days of
 * 200,000 logs. PostgreSQL weighs both from its statistics and takes the time index (bench/README.md).
 */
import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../dialect.js';

const SESSION_TIME_COLUMNS = [
  'organization_id',
  'is_test',
  'timestamp',
  'thread_identifier',
  'status_code',
  'cost',
  'prompt_tokens',
  'completion_tokens',
];

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  const inSession = isPostgres(db)
    ? sql<boolean>`thread_identifier is not null`
    : sql<boolean>`+thread_identifier is not null`;
  await db.schema
    .createIndex('logs_session_time_idx')
    .on('logs')
    .columns(SESSION_TIME_COLUMNS)
    .where(inSession)
    .execute();
  await db.schema
    .createIndex('logs_thread_idx')
    .on('logs')
    .columns(['organization_id', 'is_test', 'thread_identifier', 'timestamp', 'id'])
    .where(sql.ref('thread_identifier'), 'is not', null)
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('logs_thread_idx').execute();
  await db.schema.dropIndex('logs_session_time_idx').execute();
}
