/**
 * PostgreSQL: what the retention sweep must remember between runs about a month past every retention
 * (src/retention/month-retirement.ts, docs/decisions.md "Partitions by month"), kept in the database so
 * that a restart, or another node taking the next run, goes on where the last run stopped:
 *
 * - while the month is attached: how many runs in a row its detachment did not get its lock, and when
 *   it last tried, so that a database always busy sees its logs go by rows after a few tries;
 * - once detached: how far the walk through its retired logs got (the id of the last one walked), kept
 *   in the same statement as each batch, so that an interrupted walk resumes and counts each log once.
 *
 * SQLite keeps no months (one table, deleted by rows).
 */
import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../dialect.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`create table log_month_retirements (
    month bigint primary key,
    failed_detaches integer not null default 0,
    tried_at bigint not null default 0,
    walked_to bigint
  )`.execute(db);
}

export async function down(db: AnyDb): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`drop table log_month_retirements`.execute(db);
}
