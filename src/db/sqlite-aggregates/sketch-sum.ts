/**
 * `gatelog_sketch_sum(bins)`, the SQLite aggregate a rollup summary merges each group's sketches with
 * (logs/rollups/rollup-parts.ts): the stored sketches of a group's rows parsed straight into one
 * DenseSketch, and the merged sketch handed back once, packed (a blob of its counts: no text to build
 * here nor to parse on the event loop). The summary then reads one row per bucket and group instead of
 * every rollup row (a week of hour rows is tens of thousands), and the parsing runs on the reader
 * threads. Registered on every connection (db/sqlite-open.ts). A null sketch adds nothing; a group of
 * none answers null, as sum() does.
 */
import type SQLite from 'better-sqlite3';
import { DenseSketch } from '../../logs/rollups/dense-sketch.js';

export const SKETCH_SUM = 'gatelog_sketch_sum';

export function registerSketchSum(sqlite: SQLite.Database): void {
  sqlite.aggregate(SKETCH_SUM, {
    deterministic: true,
    start: (): DenseSketch | null => null,
    step: (sketch: DenseSketch | null, text: unknown) => {
      if (typeof text !== 'string') return sketch;
      const into = sketch ?? new DenseSketch();
      into.addText(text);
      return into;
    },
    result: (sketch: DenseSketch | null) => (sketch === null ? null : sketch.pack()),
  } as SQLite.AggregateOptions);
}
