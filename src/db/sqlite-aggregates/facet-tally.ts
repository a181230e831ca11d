/**
 * Facet counts of many fields in one read of the logs (FacetTallier): each column's values on its own
 * (not their combinations) and the values of the named metadata keys, taken from the log's own metadata
 * JSON with the side table's text form (db/metadata-values.ts metadataText) — the same rows the side table holds
 * (logs/repository.ts metadataRows), without a lookup into it per log. On SQLite it runs inside the read as
 * `gl_facet_tally(keys, metadata, c1, …)`, an aggregate registered on every connection (sqlite-open.ts);
 * on PostgreSQL over the logs it sends (logs/list/facet-counts.ts).
 *
 * It is what the honoured facet counts make of the logs matching a condition (logs/list/facet-counts.ts): a
 * GROUP BY per field, plus a join to the metadata side table, read the same logs once per field and
 * sought each log's metadata rows in a table of millions (a week of a million logs under `model +
 * status_code`: about 440 ms for the metadata alone on SQLite; bench/README.md).
 */
import { type RawBuilder, sql } from 'kysely';
import type SQLite from 'better-sqlite3';
import { metadataText } from '../metadata-values.js';

const bump = <K>(tally: Map<K, number>, value: K) => tally.set(value, (tally.get(value) ?? 0) + 1);

/**
 * Counts of each column's values (each on its own) and of the named metadata keys' values, log by log:
 * inside SQLite's aggregate, or over rows PostgreSQL sent (logs/list/facet-counts.ts).
 */
export class FacetTallier {
  private readonly keys: Set<string>;
  private readonly columns: Map<unknown, number>[];
  private readonly metadata = new Map<string, Map<string, number>>();

  constructor(keys: readonly string[], columnCount: number) {
    this.keys = new Set(keys);
    for (const key of this.keys) this.metadata.set(key, new Map());
    this.columns = Array.from({ length: columnCount }, () => new Map());
  }

  /** One log: its metadata JSON text (null when no key is counted) and its column values, in order. */
  add(metadata: string | null, columns: readonly unknown[]): void {
    for (let i = 0; i < this.columns.length; i += 1) {
      if (columns[i] !== null && columns[i] !== undefined) bump(this.columns[i], columns[i]);
    }
    if (this.keys.size === 0 || metadata === null || metadata === '{}') return;
    const object = JSON.parse(metadata) as Record<string, unknown>;
    for (const key in object) {
      const value = object[key];
      // As metadataRows: a key whose value is null is absent.
      if (value === null || value === undefined || !this.keys.has(key)) continue;
      bump(this.metadata.get(key)!, metadataText(value));
    }
  }

  result(): FacetTally {
    return {
      columns: this.columns.map((tally) => [...tally]),
      metadata: [...this.metadata].map(([key, tally]) => [key, [...tally]]),
    };
  }
}

export function registerFacetTally(sqlite: SQLite.Database): void {
  sqlite.aggregate('gl_facet_tally', {
    varargs: true,
    start: () => null,
    step: (tallier: FacetTallier | null, keys: string, metadata: string | null, ...columns: unknown[]) => {
      const state = tallier ?? new FacetTallier(JSON.parse(keys) as string[], columns.length);
      state.add(metadata, columns);
      return state;
    },
    result: (tallier: FacetTallier | null) => (tallier === null ? null : JSON.stringify(tallier.result())),
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
