import { type Kysely, PostgresAdapter, type RawBuilder, type SqlBool, sql } from 'kysely';
/**
 * The few places where SQLite and PostgreSQL differ, kept in one seam.
 */

/** A UNIQUE or PRIMARY KEY constraint failed (better-sqlite3 code, or PostgreSQL SQLSTATE 23505). */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** A FOREIGN KEY constraint failed: the row referred to is gone (better-sqlite3 code, or SQLSTATE 23503). */
export function isForeignKeyViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

/** True when the Kysely instance talks to PostgreSQL (migrations use it for the few DDL differences). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any schema: migrations call it too
export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * Text matching, the other difference. Each function tests whether a text matches any of several values
 * (a filter value may be a list), as one OR. Substring tests use instr/strpos rather than LIKE: no
 * metacharacters to escape, and always case-sensitive (SQLite's LIKE is not). Parameters are cast to
 * text so PostgreSQL can type them inside functions.
 *
 * Case-insensitive matching is Unicode-aware. PostgreSQL's lower() already is (UTF-8 with a C.UTF-8 or
 * ICU ctype). SQLite's folds ASCII only, so SQLite connections get gl_lower() (JavaScript's
 * toLowerCase, registered in connect.ts); calling it per row is slow, so a row whose text is all ASCII
 * is matched with the native, ASCII-case-insensitive LIKE, and gl_lower() runs only on rows holding
 * other characters. The two agree: on ASCII text, LIKE's folding is exactly lower-casing. The test for
 * other characters is written once for all the values: with a thousand values, a thousand GLOBs per
 * row were half the work of such a filter.
 */
export interface TextFunctions {
  contains(text: RawBuilder<unknown>, needles: readonly string[]): RawBuilder<SqlBool>;
  startsWith(text: RawBuilder<unknown>, prefixes: readonly string[]): RawBuilder<SqlBool>;
  endsWith(text: RawBuilder<unknown>, suffixes: readonly string[]): RawBuilder<SqlBool>;
  /** Equal ignoring case. */
  iequals(text: RawBuilder<unknown>, values: readonly string[]): RawBuilder<SqlBool>;
  /** Contains ignoring case. */
  icontains(text: RawBuilder<unknown>, needles: readonly string[]): RawBuilder<SqlBool>;
}

const asText = (v: string) => sql`cast(${v} as text)`;
// eslint-disable-next-line no-control-regex -- "all ASCII" includes the control characters
const isAscii = (v: string) => /^[\x00-\x7f]*$/.test(v);
const likeLiteral = (v: string) => v.replace(/[\\%_]/g, (c) => `\\${c}`);
/** GLOB pattern matching text that holds at least one non-ASCII character. */
const NON_ASCII_GLOB = '*[^\u0001-\u007f]*';

/** True when any of the conditions is. */
function anyOf(conditions: readonly RawBuilder<SqlBool>[]): RawBuilder<SqlBool> {
  if (conditions.length === 0) return sql<SqlBool>`1 = 0`;
  if (conditions.length === 1) return conditions[0];
  return sql<SqlBool>`(${sql.join(conditions, sql` or `)})`;
}

/** A text function of one value, applied to each value of a list. */
const each =
  (test: (t: RawBuilder<unknown>, v: string) => RawBuilder<SqlBool>) =>
  (t: RawBuilder<unknown>, values: readonly string[]) =>
    anyOf(values.map((v) => test(t, v)));

export function textFunctions(dialect: 'sqlite' | 'postgres'): TextFunctions {
  if (dialect === 'postgres') {
    return {
      contains: each((t, n) => sql<SqlBool>`strpos(${t}, ${asText(n)}) > 0`),
      startsWith: each((t, p) => sql<SqlBool>`left(${t}, length(${asText(p)})) = ${asText(p)}`),
      endsWith: each((t, s) => sql<SqlBool>`right(${t}, length(${asText(s)})) = ${asText(s)}`),
      iequals: each((t, v) => sql<SqlBool>`lower(${t}) = lower(${asText(v)})`),
      icontains: each((t, n) => sql<SqlBool>`strpos(lower(${t}), lower(${asText(n)})) > 0`),
    };
  }
  /** ASCII rows through LIKE when a value can match them; rows with other characters through gl_lower(). */
  const folded = (
    t: RawBuilder<unknown>,
    values: readonly string[],
    pattern: (v: string) => string,
    unicode: (lowered: string) => RawBuilder<SqlBool>,
  ) => {
    const lowered = values.map((v) => v.toLowerCase());
    const fast = lowered.filter(isAscii).map((l) => sql<SqlBool>`${t} like ${pattern(l)} escape '\\'`);
    return anyOf([...fast, sql<SqlBool>`(${t} glob ${NON_ASCII_GLOB} and ${anyOf(lowered.map(unicode))})`]);
  };
  return {
    contains: each((t, n) => sql<SqlBool>`instr(${t}, ${asText(n)}) > 0`),
    startsWith: each((t, p) => sql<SqlBool>`substr(${t}, 1, length(${asText(p)})) = ${asText(p)}`),
    endsWith: each((t, s) => sql<SqlBool>`substr(${t}, -length(${asText(s)})) = ${asText(s)}`),
    iequals: (t, values) => folded(t, values, likeLiteral, (l) => sql<SqlBool>`gl_lower(${t}) = ${l}`),
    icontains: (t, needles) =>
      folded(
        t,
        needles,
        (l) => `%${likeLiteral(l)}%`,
        (l) => sql<SqlBool>`instr(gl_lower(${t}), ${l}) > 0`,
      ),
  };
}

/** `id` is one of `ids` (bound as one parameter however many). */
export function oneOf(
  dialect: 'sqlite' | 'postgres',
  id: RawBuilder<unknown>,
  ids: readonly number[],
): RawBuilder<SqlBool> {
  if (ids.length === 0) return sql<SqlBool>`1 = 0`;
  if (dialect === 'postgres') return sql<SqlBool>`${id} = any(cast(${`{${ids.join(',')}}`} as bigint[]))`;
  return sql<SqlBool>`${id} in (select value from json_each(${JSON.stringify(ids)}))`;
}
