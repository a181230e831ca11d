/**
 * `COPY table (columns) FROM STDIN` on a node-postgres client, for the bulk seed of a bench store: rows
 * sent in PostgreSQL's text format, parsed by the server without a statement per row nor a JSON
 * document to expand. A minimal submittable (the protocol's copy-in: the query, then the data, then
 * its end), as node-postgres runs any object with `submit`; no package needed for this one use.
 */
import { EventEmitter } from 'node:events';
import type pg from 'pg';

/** The wire connection node-postgres hands a submittable (the calls this one makes). */
interface CopyConnection {
  query(text: string): void;
  sendCopyFromChunk(chunk: Buffer): void;
  endCopyFrom(): void;
}

/** A value in COPY's text format: `\N` for null, backslash, tab, newline and carriage return escaped. */
function field(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'boolean') return value ? 't' : 'f';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return /[\\\t\n\r]/.test(text)
    ? text.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'))
    : text;
}

/** Data sent per chunk (the copy's rows are encoded a chunk at a time). */
const CHUNK_CHARS = 1 << 20;

class CopyIn extends EventEmitter {
  private error: Error | null = null;
  constructor(
    private readonly text: string,
    private readonly columns: readonly string[],
    private readonly rows: readonly Record<string, unknown>[],
    private readonly done: (error: Error | null) => void,
  ) {
    super();
  }
  submit(connection: CopyConnection) {
    connection.query(this.text);
  }
  handleCopyInResponse(connection: CopyConnection) {
    let chunk = '';
    for (const row of this.rows) {
      let line = '';
      for (let i = 0; i < this.columns.length; i++) line += (i > 0 ? '\t' : '') + field(row[this.columns[i]]);
      chunk += line + '\n';
      if (chunk.length >= CHUNK_CHARS) {
        connection.sendCopyFromChunk(Buffer.from(chunk));
        chunk = '';
      }
    }
    if (chunk.length > 0) connection.sendCopyFromChunk(Buffer.from(chunk));
    connection.endCopyFrom();
  }
  handleCommandComplete() {}
  handleError(error: Error) {
    this.error = error;
  }
  handleReadyForQuery() {
    this.done(this.error);
  }
}

/** Copies `rows` (objects keyed by column) into `table`'s `columns`. */
export function copyRows(
  client: pg.Client,
  table: string,
  columns: readonly string[],
  rows: readonly Record<string, unknown>[],
): Promise<void> {
  const names = columns.map((c) => `"${c}"`).join(', ');
  return new Promise((resolve, reject) => {
    const copy = new CopyIn(`copy ${table} (${names}) from stdin`, columns, rows, (error) =>
      error ? reject(error) : resolve(),
    );
    void client.query(copy as unknown as pg.QueryConfig);
  });
}
