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
 * Text matching, the other difference. Substring tests use instr/strpos rather than LIKE: no
 * metacharacters to escape, and always case-sensitive (SQLite's LIKE is not). Parameters are cast to
 * text so PostgreSQL can type them inside functions.
 *
 * Case-insensitive matching is Unicode-aware. PostgreSQL's lower() already is (UTF-8 with a C.UTF-8 or
 * ICU ctype). SQLite's folds ASCII only, so SQLite connections get gl_lower() (JavaScript's
 * toLowerCase, registered in connect.ts); calling it per row is slow, so a row whose text is all ASCII
 * is matched with the native, ASCII-case-insensitive LIKE, and gl_lower() runs only on rows holding
 * other characters. The two agree: on ASCII text, LIKE's folding is exactly lower-casing.
 */
export interface TextFunctions {
  contains(text: RawBuilder<unknown>, needle: string): RawBuilder<SqlBool>;
  startsWith(text: RawBuilder<unknown>, prefix: string): RawBuilder<SqlBool>;
  endsWith(text: RawBuilder<unknown>, suffix: string): RawBuilder<SqlBool>;
  /** Equal ignoring case. */
  iequals(text: RawBuilder<unknown>, value: string): RawBuilder<SqlBool>;
  /** Contains ignoring case. */
  icontains(text: RawBuilder<unknown>, needle: string): RawBuilder<SqlBool>;
}

const asText = (v: string) => sql`cast(${v} as text)`;
// eslint-disable-next-line no-control-regex -- "all ASCII" includes the control characters
const isAscii = (v: string) => /^[\x00-\x7f]*$/.test(v);
const likeLiteral = (v: string) => v.replace(/[\\%_]/g, (c) => `\\${c}`);
/** GLOB pattern matching text that holds at least one non-ASCII character. */
const NON_ASCII_GLOB = '*[^\u0001-\u007f]*';

export function textFunctions(dialect: 'sqlite' | 'postgres'): TextFunctions {
  if (dialect === 'postgres') {
    return {
      contains: (t, n) => sql<SqlBool>`strpos(${t}, ${asText(n)}) > 0`,
      startsWith: (t, p) => sql<SqlBool>`left(${t}, length(${asText(p)})) = ${asText(p)}`,
      endsWith: (t, s) => sql<SqlBool>`right(${t}, length(${asText(s)})) = ${asText(s)}`,
      iequals: (t, v) => sql<SqlBool>`lower(${t}) = lower(${asText(v)})`,
      icontains: (t, n) => sql<SqlBool>`strpos(lower(${t}), lower(${asText(n)})) > 0`,
    };
  }
  /** Rows with non-ASCII text, compared through gl_lower(); ASCII rows through LIKE when it can match. */
  const folded = (
    t: RawBuilder<unknown>,
    value: string,
    pattern: (v: string) => string,
    unicode: RawBuilder<SqlBool>,
  ) => {
    const lowered = value.toLowerCase();
    const slow = sql<SqlBool>`(${t} glob ${NON_ASCII_GLOB} and ${unicode})`;
    if (!isAscii(lowered)) return slow;
    return sql<SqlBool>`(${t} like ${pattern(lowered)} escape '\\' or ${slow})`;
  };
  return {
    contains: (t, n) => sql<SqlBool>`instr(${t}, ${asText(n)}) > 0`,
    startsWith: (t, p) => sql<SqlBool>`substr(${t}, 1, length(${asText(p)})) = ${asText(p)}`,
    endsWith: (t, s) => sql<SqlBool>`substr(${t}, -length(${asText(s)})) = ${asText(s)}`,
    iequals: (t, v) => folded(t, v, likeLiteral, sql<SqlBool>`gl_lower(${t}) = ${v.toLowerCase()}`),
    icontains: (t, n) =>
      folded(t, n, (l) => `%${likeLiteral(l)}%`, sql<SqlBool>`instr(gl_lower(${t}), ${n.toLowerCase()}) > 0`),
  };
}
