/**
 * Writing rollup deltas (rollup-deltas.ts): one upsert that adds a delta's counts and sums to its row and
 * merges its sketches, the same SQL on both databases; rows whose logs are all gone are deleted.
 */
import { CompiledQuery, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { onPostgres, rowsInsert } from '../../db/rows-insert.js';
import {
  deltaRow,
  ROLLUP_KEY_COLUMNS,
  ROLLUP_VALUE_COLUMNS,
  type RollupDelta,
  SKETCHED_FIELDS,
} from './rollup-deltas.js';

const SKETCH_COLUMNS = new Set(SKETCHED_FIELDS.map((f) => `${f}_bins`));

/** The upsert's end: counts and sums added, sketches merged (gatelog_sketch_merge on both databases). */
export const ROLLUP_CONFLICT =
  `on conflict (${ROLLUP_KEY_COLUMNS.join(', ')}) do update set ` +
  ROLLUP_VALUE_COLUMNS.map((c) =>
    SKETCH_COLUMNS.has(c)
      ? `${c} = gatelog_sketch_merge(log_rollups.${c}, excluded.${c})`
      : `${c} = log_rollups.${c} + excluded.${c}`,
  ).join(', ');

const ALL_COLUMNS = [...ROLLUP_KEY_COLUMNS, ...ROLLUP_VALUE_COLUMNS];

/** The same upsert as one prepared statement of one row, for the SQLite log-writing thread. */
export const SQLITE_ROLLUP_UPSERT =
  `insert into log_rollups (${ALL_COLUMNS.join(', ')}) values (${ALL_COLUMNS.map(() => '?').join(', ')}) ` +
  ROLLUP_CONFLICT;

/** A delta's values in ALL_COLUMNS order, for SQLITE_ROLLUP_UPSERT. */
export function rollupParameters(delta: RollupDelta): (string | number)[] {
  const row = deltaRow(delta);
  return ALL_COLUMNS.map((c) => row[c]);
}

/** Deletes the rows a removal emptied (SQLite writer thread: prepared once). */
export const SQLITE_EMPTY_ROLLUP_DELETE = `delete from log_rollups where ${ROLLUP_KEY_COLUMNS.map((c) => `${c} = ?`).join(' and ')} and log_count <= 0`;

export const rollupKeyParameters = (d: RollupDelta): (string | number)[] => [
  d.organization_id,
  d.grain_ms,
  d.bucket_start,
  ...d.dims,
];

/** Rows per INSERT: 32 parameters each, well under both drivers' limits. */
const CHUNK = 500;

/** Applies deltas in the caller's transaction, on either database, outside the SQLite writer thread. */
export async function applyRollupDeltas(trx: Transaction<Database> | Kysely<Database>, deltas: readonly RollupDelta[]) {
  const postgres = onPostgres(trx);
  for (let i = 0; i < deltas.length; i += CHUNK) {
    const rows = deltas.slice(i, i + CHUNK).map(deltaRow);
    if (postgres) {
      await trx.executeQuery(rowsInsert('log_rollups', rows, ROLLUP_CONFLICT));
      continue;
    }
    // SQLite: the same statement with ? placeholders.
    const parameters = rows.flatMap((row) => ALL_COLUMNS.map((c) => row[c]));
    const tuple = `(${ALL_COLUMNS.map(() => '?').join(', ')})`;
    await trx.executeQuery(
      CompiledQuery.raw(
        `insert into log_rollups (${ALL_COLUMNS.join(', ')}) values ${rows.map(() => tuple).join(', ')} ${ROLLUP_CONFLICT}`,
        parameters,
      ),
    );
  }
  // Rows left with no log (their logs deleted) would only be read as zeros.
  for (const d of deltas.filter((x) => x.log_count < 0)) {
    const where = ROLLUP_KEY_COLUMNS.map((c, k) => (postgres ? `${c} = $${k + 1}` : `${c} = ?`)).join(' and ');
    await trx.executeQuery(
      CompiledQuery.raw(`delete from log_rollups where ${where} and log_count <= 0`, rollupKeyParameters(d)),
    );
  }
}
