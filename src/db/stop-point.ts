/**
 * `gl_stop_point()`, a SQLite function that returns 1 (registered by sqlite-open.ts): written into the
 * per-row conditions of a statement that may read for long, it makes that statement stoppable. A reader
 * thread past its query budget is ended (workers/pool.ts), and V8 ends a thread only when it runs
 * JavaScript: without such a call the statement runs to its end first (better-sqlite3 has no interrupt,
 * and its SQLite has no progress handler). Calling into JavaScript costs about a tenth of a microsecond
 * per row, so it goes where each row costs far more (an `instr` over a log's text).
 */
import { type RawBuilder, type SqlBool, sql } from 'kysely';

export const STOP_POINT = 'gl_stop_point';

/** The condition (always true) that calls it; put it before the costly conditions of the row. */
export const stopPoint = (): RawBuilder<SqlBool> => sql<SqlBool>`${sql.raw(STOP_POINT)}()`;
