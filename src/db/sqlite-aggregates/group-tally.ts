/**
 * Counts by group without a sort: `gl_group_tally(v0, v1, …)`, a SQLite aggregate registered on every
 * connection (sqlite-open.ts), answers how many rows hold each combination of values as JSON
 * `[[v0, v1, …, n], …]`. A GROUP BY sorts every row it counts in a temporary B-tree; this files them in
 * nested maps in JavaScript (about 50 ns a row for the call), which is what makes the summary's top
 * groups cheap over a large range.
 */
import { type RawBuilder, sql } from 'kysely';
import type SQLite from 'better-sqlite3';

/**
 * `gl_group_tally(v0, v1, …)`: how many rows hold each combination of values, as JSON
 * `[[v0, v1, …, n], …]` — a GROUP BY's counts without its sort of every row (top groups of a summary).
 */
export function registerGroupTally(sqlite: SQLite.Database): void {
  type Level = Map<unknown, Level | number>;
  const flatten = (level: Level, prefix: unknown[], out: unknown[][]) => {
    for (const [v, next] of level) {
      if (typeof next === 'number') out.push([...prefix, v, next]);
      else flatten(next, [...prefix, v], out);
    }
    return out;
  };
  sqlite.aggregate('gl_group_tally', {
    varargs: true,
    start: (): Level => new Map(),
    step: (tally: Level, ...values: unknown[]) => {
      let level = tally;
      const last = values.length - 1;
      for (let i = 0; i < last; i += 1) {
        let next = level.get(values[i]) as Level | undefined;
        if (!next) level.set(values[i], (next = new Map()));
        level = next;
      }
      level.set(values[last], ((level.get(values[last]) as number | undefined) ?? 0) + 1);
    },
    result: (tally: Level) => JSON.stringify(flatten(tally, [], [])),
  } as SQLite.AggregateOptions);
}

/** The aggregate over these expressions (one column of JSON text, read back by parseTally). */
export const groupTally = (values: RawBuilder<unknown>[]) => sql<string>`gl_group_tally(${sql.join(values)})`;

/** The combinations and counts a gl_group_tally answered: each entry its values, then its count. */
export const parseTally = (text: string) => JSON.parse(text) as unknown[][];
