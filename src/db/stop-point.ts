/**
 * `gl_stop_point()`, a SQLite function that returns 1 (registered by sqlite-open.ts): written into the
 * per-row conditions of a statement that may read for long, it makes that statement stoppable. A reader
 * thread whose request is over (past its query budget, or its client gone) is ended (workers/pool.ts),
 * and V8 ends a thread only when it runs JavaScript: without such a call the statement runs to its end
 * first (better-sqlite3 has no interrupt, and its SQLite has no progress handler). Calling into
 * JavaScript costs about a tenth of a microsecond per row, so a call per row goes where each row costs
 * far more (an `instr` over a log's text); elsewhere `stoppable` calls it on every few rows.
 */
import { type RawBuilder, type SqlBool, sql } from 'kysely';

export const STOP_POINT = 'gl_stop_point';

/** The condition (always true) that calls it; put it before the costly conditions of the row. */
export const stopPoint = (): RawBuilder<SqlBool> => sql<SqlBool>`${sql.raw(STOP_POINT)}()`;

/**
 * Rows between two stop points of a filtered read, by id: a prime, so that the logs of one organization
 * meet it one in STOP_EVERY whatever stride their ids take among others'.
 */
const STOP_EVERY = 61;

/**
 * A read's filter condition made stoppable on SQLite: tested after a stop point on every row whose id
 * is a multiple of STOP_EVERY, so that a read of many logs ends within a few dozen of them once its
 * thread is ended, however costly the filter's tests per log (up to 25,000 substring tests). The id's
 * test costs about 10 ns per row read, a call per row 60–80 (a million logs under a cheap filter: 40
 * ms plain, 50 with this, 100 with a call per row). PostgreSQL's statements are cancelled instead
 * (pg-read-pool.ts): the condition unchanged.
 */
export function stoppable(
  dialect: 'sqlite' | 'postgres',
  id: RawBuilder<unknown>,
  condition: RawBuilder<SqlBool>,
): RawBuilder<SqlBool> {
  if (dialect !== 'sqlite') return condition;
  return sql<SqlBool>`((${id} % ${sql.lit(STOP_EVERY)} <> 0 or ${stopPoint()}) and ${condition})`;
}
