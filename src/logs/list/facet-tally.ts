/**
 * Facet counts of many fields in one read of the logs, on SQLite: `gl_facet_tally(keys, metadata, c1, …)`,
 * an aggregate registered on every connection (sqlite-open.ts), counts each column argument's values
 * on its own (not their combinations) and the values of the named metadata keys, taken from the log's
 * own metadata JSON with the side table's text form (json-text.ts metadataText) — the same rows the
 * side table holds (repository.ts metadataRows), without a lookup into it per log.
 *
 * It is what the honoured facet counts make of the logs matching a condition (facet-counts.ts): a
 * GROUP BY per field, plus a join to the metadata side table, read the same logs once per field and
 * sought each log's metadata rows in a table of millions (a week of a million logs under `model +
 * status_code`: about 440 ms for the metadata alone; bench/README.md).
 */
import { type RawBuilder, sql } from 'kysely';
import type SQLite from 'better-sqlite3';
import { metadataText } from '../json-text.js';

/** Per column argument, its values' counts; then per metadata key, its values' counts. */
interface FacetTallyState {
  keys: Set<string> | null;
  columns: Map<unknown, number>[];
  metadata: Map<string, Map<string, number>>;
}

const bump = <K>(tally: Map<K, number>, value: K) => tally.set(value, (tally.get(value) ?? 0) + 1);

export function registerFacetTally(sqlite: SQLite.Database): void {
  sqlite.aggregate('gl_facet_tally', {
    varargs: true,
    start: (): FacetTallyState => ({ keys: null, columns: [], metadata: new Map() }),
    step: (state: FacetTallyState, keys: string, metadata: string | null, ...columns: unknown[]) => {
      if (state.keys === null) {
        state.keys = new Set(JSON.parse(keys) as string[]);
        for (const key of state.keys) state.metadata.set(key, new Map());
        state.columns = columns.map(() => new Map());
      }
      for (let i = 0; i < columns.length; i += 1) {
        if (columns[i] !== null) bump(state.columns[i], columns[i]);
      }
      if (state.keys.size === 0 || metadata === null || metadata === '{}') return;
      const object = JSON.parse(metadata) as Record<string, unknown>;
      for (const key in object) {
        const value = object[key];
        // As metadataRows: a key whose value is null is absent.
        if (value === null || value === undefined || !state.keys.has(key)) continue;
        bump(state.metadata.get(key)!, metadataText(value));
      }
    },
    result: (state: FacetTallyState) =>
      JSON.stringify({
        columns: state.columns.map((tally) => [...tally]),
        metadata: [...state.metadata].map(([key, tally]) => [key, [...tally]]),
      }),
  } as SQLite.AggregateOptions);
}

/** What gl_facet_tally answered: per column, [value, count] pairs; per metadata key, its pairs. */
export interface FacetTally {
  columns: [unknown, number][][];
  metadata: [string, [string, number][]][];
}

/** The aggregate over a log's metadata and these columns, for these metadata keys (read by parseFacetTally). */
export const facetTally = (keys: readonly string[], metadata: RawBuilder<unknown>, columns: RawBuilder<unknown>[]) =>
  sql<string | null>`gl_facet_tally(${JSON.stringify(keys)}, ${metadata}${sql.join(
    columns.map((c) => sql`, ${c}`),
    sql``,
  )})`;

/** The tally's answer, with every column present (no log matched: the aggregate never stepped). */
export function parseFacetTally(text: string | null, columnCount: number): FacetTally {
  const tally = (text === null ? { columns: [], metadata: [] } : JSON.parse(text)) as FacetTally;
  return { columns: Array.from({ length: columnCount }, (_, i) => tally.columns[i] ?? []), metadata: tally.metadata };
}
