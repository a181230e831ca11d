import { type Kysely, PostgresAdapter, type RawBuilder, type SqlBool, sql } from 'kysely';
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

/**
 * Text matching, the other difference. SQLite's lower() folds ASCII only, so SQLite connections get a
 * Unicode-aware gl_lower() (registered in connect.ts); PostgreSQL's lower() already is (UTF-8, C.UTF-8
 * or ICU ctype). Parameters are cast to text so PostgreSQL can type them inside functions.
 * Substring tests use instr/strpos rather than LIKE: no metacharacters to escape, and always
 * case-sensitive (SQLite's LIKE is not).
 */
export interface TextFunctions {
  lower(expr: RawBuilder<unknown>): RawBuilder<string>;
  contains(haystack: RawBuilder<unknown>, needle: RawBuilder<unknown>): RawBuilder<SqlBool>;
  startsWith(text: RawBuilder<unknown>, prefix: string): RawBuilder<SqlBool>;
  endsWith(text: RawBuilder<unknown>, suffix: string): RawBuilder<SqlBool>;
}

export function textFunctions(dialect: 'sqlite' | 'postgres'): TextFunctions {
  const param = (v: string) => sql`cast(${v} as text)`;
  if (dialect === 'postgres') {
    return {
      lower: (e) => sql<string>`lower(${e})`,
      contains: (h, n) => sql<SqlBool>`strpos(${h}, ${n}) > 0`,
      startsWith: (t, p) => sql<SqlBool>`left(${t}, length(${param(p)})) = ${param(p)}`,
      endsWith: (t, s) => sql<SqlBool>`right(${t}, length(${param(s)})) = ${param(s)}`,
    };
  }
  return {
    lower: (e) => sql<string>`gl_lower(${e})`,
    contains: (h, n) => sql<SqlBool>`instr(${h}, ${n}) > 0`,
    startsWith: (t, p) => sql<SqlBool>`substr(${t}, 1, length(${param(p)})) = ${param(p)}`,
    endsWith: (t, s) => sql<SqlBool>`substr(${t}, -length(${param(s)})) = ${param(s)}`,
  };
}
