/**
 * `gatelog_sketch_sum(bins)`, the SQLite aggregate a rollup summary merges each group's sketches with
 * (logs/rollups/rollup-summary.ts): the stored sketches of a group's rows parsed straight into one dense
 * array, and the merged sketch handed back once, as stored text. The summary then reads one row per
 * bucket and group instead of every rollup row (a week of hour rows is tens of thousands), and the
 * parsing runs on the reader threads rather than the event loop. Registered on every connection
 * (db/sqlite-open.ts). A null sketch adds nothing; a group of none answers null, as sum() does.
 */
import type SQLite from 'better-sqlite3';
import { addEncodedToDense, type Dense, encodeDense, newDense } from '../../logs/rollups/sketch.js';

export const SKETCH_SUM = 'gatelog_sketch_sum';

export function registerSketchSum(sqlite: SQLite.Database): void {
  sqlite.aggregate(SKETCH_SUM, {
    deterministic: true,
    start: (): Dense | null => null,
    step: (dense: Dense | null, text: unknown) => {
      if (typeof text !== 'string') return dense;
      const into = dense ?? newDense();
      addEncodedToDense(text, into);
      return into;
    },
    result: (dense: Dense | null) => (dense === null ? null : encodeDense(dense)),
  } as SQLite.AggregateOptions);
}
