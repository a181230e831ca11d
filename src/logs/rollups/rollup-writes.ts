/**
 * Writing rollup deltas (rollup-deltas.ts): per rollup table (rollup-kinds.ts) one upsert that adds a
 * delta's counts and sums to its row and merges its sketches, the same SQL on both databases; rows whose
 * logs are all gone are deleted.
 */
import { CompiledQuery, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { onPostgres, rowsInsert } from '../../db/rows-insert.js';
import { deltaRow, type RollupDelta, type RollupKind } from './rollup-deltas.js';
import { encodeBins } from './sketch.js';

/** The upsert's end: counts and sums added, sketches merged (gatelog_sketch_merge on both databases). */
export function rollupConflict(kind: RollupKind): string {
  const sketches = new Set(kind.sketched.map((f) => `${f}_bins`));
  return (
    `on conflict (${kind.keyColumns.join(', ')}) do update set ` +
    kind.valueColumns
      .map((c) =>
        sketches.has(c)
          ? `${c} = gatelog_sketch_merge(${kind.table}.${c}, excluded.${c})`
          : `${c} = ${kind.table}.${c} + excluded.${c}`,
      )
      .join(', ')
  );
}

const allColumns = (kind: RollupKind) => [...kind.keyColumns, ...kind.valueColumns];

/** The same upsert as one prepared statement of one row, for the SQLite log-writing thread. */
export function sqliteRollupUpsert(kind: RollupKind): string {
  const columns = allColumns(kind);
  return (
    `insert into ${kind.table} (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')}) ` +
    rollupConflict(kind)
  );
}

/**
 * A delta's values in its table's column order (keyColumns, then valueColumns: rollup-kinds.ts), for
 * sqliteRollupUpsert: written straight into the array, without deltaRow's object of named columns
 * (a thousand deltas a batch of a thousand logs with many customers).
 */
export function rollupParameters(d: RollupDelta): (string | number)[] {
  const values: (string | number)[] = [d.organization_id, d.grain_ms, d.bucket_start, ...d.dims];
  values.push(d.log_count, d.failed_count);
  for (const [n, sum] of d.sums) values.push(n, sum);
  for (const bins of d.bins) values.push(encodeBins(bins));
  return values;
}

export const rollupKeyParameters = (d: RollupDelta): (string | number)[] => [
  d.organization_id,
  d.grain_ms,
  d.bucket_start,
  ...d.dims,
];

/** Rows per INSERT: 32 parameters each at most, well under both drivers' limits. */
const CHUNK = 500;

/** Applies deltas (of any tables) in the caller's transaction, on either database, outside the SQLite writer thread. */
export async function applyRollupDeltas(trx: Transaction<Database> | Kysely<Database>, deltas: readonly RollupDelta[]) {
  const postgres = onPostgres(trx);
  // Table by table, each in the order rollupDeltas gave (the order rows are locked in).
  for (const kind of new Set(deltas.map((d) => d.kind))) {
    const ofKind = deltas.filter((d) => d.kind === kind);
    const columns = allColumns(kind);
    const conflict = rollupConflict(kind);
    for (let i = 0; i < ofKind.length; i += CHUNK) {
      const rows = ofKind.slice(i, i + CHUNK).map(deltaRow);
      if (postgres) {
        await trx.executeQuery(rowsInsert(kind.table, rows, conflict));
        continue;
      }
      // SQLite: the same statement with ? placeholders.
      const parameters = rows.flatMap((row) => columns.map((c) => row[c]));
      const tuple = `(${columns.map(() => '?').join(', ')})`;
      await trx.executeQuery(
        CompiledQuery.raw(
          `insert into ${kind.table} (${columns.join(', ')}) values ${rows.map(() => tuple).join(', ')} ${conflict}`,
          parameters,
        ),
      );
    }
    // Rows left with no log (their logs deleted) would only be read as zeros.
    const where = kind.keyColumns.map((c, k) => (postgres ? `${c} = $${k + 1}` : `${c} = ?`)).join(' and ');
    for (const d of ofKind.filter((x) => x.log_count < 0)) {
      await trx.executeQuery(
        CompiledQuery.raw(`delete from ${kind.table} where ${where} and log_count <= 0`, rollupKeyParameters(d)),
      );
    }
  }
}
