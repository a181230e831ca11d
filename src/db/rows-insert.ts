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
 * `insert into table (columns) … [tail]`: `tail` the statement's end (`on conflict …`, `returning …`),
 * written as SQL.
 *
 * When every row gives every column (the writer's rows do), the rows go as one JSON parameter, read
 * back as the table's own row type (`json_populate_recordset`): a 500-row upsert of a rollup took
 * 19–20 ms so, against 29–35 ms as a VALUES list of 12,500 parameters, which PostgreSQL parses and
 * plans row by row. A number JSON cannot write (NaN, ±Infinity) would arrive as null, and a lone
 * surrogate be refused: such rows, and rows that leave a column out (DEFAULT), go as a VALUES list.
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
  const end = tail ? ` ${tail}` : '';
  const names = columns.map(quoted).join(', ');
  if (rows.every((row) => asJson(row as Record<string, unknown>, columns))) {
    const sql = `insert into ${quoted(table)} (${names}) select ${names} from json_populate_recordset(null::${quoted(table)}, $1)${end}`;
    return CompiledQuery.raw(sql, [JSON.stringify(rows)]);
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
  return CompiledQuery.raw(`insert into ${quoted(table)} (${names}) values ${tuples.join(', ')}${end}`, parameters);
}

/** With the `u` flag a pair is one code point: only a surrogate alone matches. */
const LONE_SURROGATE = /\p{Cs}/u;

/** Whether a row's values of these columns go through JSON as they are: each given, as null, text or a finite number. */
function asJson(row: Record<string, unknown>, columns: readonly string[]): boolean {
  for (const column of columns) {
    const value = row[column];
    if (value === null) continue;
    // A lone UTF-16 surrogate: JSON would carry it escaped, which PostgreSQL refuses; as a parameter
    // it is sent as U+FFFD.
    if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value)) return false;
      continue;
    }
    if (typeof value === 'number' && Number.isFinite(value)) continue;
    return false;
  }
  return true;
}
