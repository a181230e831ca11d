import { type Kysely, PostgresAdapter } from 'kysely';
/**
 * The few places where SQLite and PostgreSQL differ, kept in one seam.
 */

/** A UNIQUE or PRIMARY KEY constraint failed (better-sqlite3 code, or PostgreSQL SQLSTATE 23505). */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** True when the Kysely instance talks to PostgreSQL (migrations use it for the few DDL differences). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any schema: migrations call it too
export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
