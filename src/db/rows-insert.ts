/**
 * A multi-row INSERT on PostgreSQL, its SQL written directly: what Kysely's insert builder compiles
 * (`insertInto(table).values(rows)`: the columns any row gives, DEFAULT where a row has none, the values
 * as parameters the driver sends as they are), without building and walking its query tree for every
 * value — which cost the log writer more of the event loop than the round trip itself (a batch of
 * logs is ~60 columns a row, each batch a fresh tree).
 */
import { CompiledQuery, type Kysely, PostgresAdapter } from 'kysely';

/** Whether `db` runs on PostgreSQL (where rowsInsert's SQL is meant for). */
export function onPostgres(db: Pick<Kysely<never>, 'getExecutor'>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * `insert into table (columns) values (…), (…) [tail]`: `tail` the statement's end (`on conflict …`,
 * `returning …`), written as SQL.
 */
export function rowsInsert(table: string, rows: readonly object[], tail = ''): CompiledQuery {
  const columns: string[] = [];
  const seen = new Set<string>();
  for (const row of rows) {
    for (const [column, value] of Object.entries(row)) {
      if (value !== undefined && !seen.has(column)) {
        seen.add(column);
        columns.push(column);
      }
    }
  }
  const parameters: unknown[] = [];
  const tuples = rows.map((row) => {
    const values = row as Record<string, unknown>;
    const cells = columns.map((column) => {
      const value = values[column];
      if (value === undefined) return 'default';
      parameters.push(value);
      return `$${parameters.length}`;
    });
    return `(${cells.join(', ')})`;
  });
  const sql = `insert into ${quoted(table)} (${columns.map(quoted).join(', ')}) values ${tuples.join(', ')}${tail ? ` ${tail}` : ''}`;
  return CompiledQuery.raw(sql, parameters);
}
