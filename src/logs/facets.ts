/**
 * Facet counts: how many logs have each value of each selection field (and each metadata key), per
 * organization, environment (is_test) and time bucket, in hourly and daily buckets. filter_options
 * over a long range sums a few thousand of these rows instead of grouping every log of the range
 * (docs/api.md "Listing logs"; bench/README.md). They are changed in the same transaction as the logs they count:
 * when logs are written, when a log is deleted, and when a log's metadata is replaced.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database, LogFacetsTable } from '../db/schema.js';
import { LOG_FIELDS } from '../filters/registry.js';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
export const GRAINS = [HOUR_MS, DAY_MS] as const;

/** The log columns whose values filter_options offers (registry entries with `choices`). */
export const FACET_FIELDS = [...LOG_FIELDS.fields.values()]
  .filter((def) => def.choices)
  .map((def) => ({ name: def.name, column: def.column }));

/** What a log contributes to the facet counts. */
export interface FacetSource {
  organization_id: string;
  is_test: number;
  timestamp: number;
  /** Column values of the FACET_FIELDS, by column name. */
  columns: Record<string, unknown>;
  /** Metadata as stored in the side table: key → text form. */
  metadata: readonly { key: string; value_text: string }[];
}

/** A change to one facet-count row: `log_count` is added to the stored count. */
export type FacetDelta = LogFacetsTable;

export const bucketOf = (timestamp: number, grain: number) => Math.floor(timestamp / grain) * grain;

/**
 * The changes to the facet counts for adding some logs and removing others, one per distinct row, in
 * a fixed order: concurrent writers then lock rows in the same order (no deadlock).
 */
export function facetDeltas(added: readonly FacetSource[], removed: readonly FacetSource[] = []): FacetDelta[] {
  const byKey = new Map<string, FacetDelta>();
  let sign = 1;
  // Keys are plain concatenations (a JSON array per key cost most of a batch's JavaScript time); the
  // lengths of the free-text parts keep them unambiguous whatever characters those parts hold.
  const add = (log: FacetSource, prefixes: readonly string[], field: string, value: string) => {
    for (let g = 0; g < GRAINS.length; g++) {
      const key = `${prefixes[g]}${field.length}:${field}${value}`;
      const existing = byKey.get(key);
      if (existing) existing.log_count += sign;
      else
        byKey.set(key, {
          organization_id: log.organization_id,
          field,
          grain_ms: GRAINS[g],
          bucket_start: bucketOf(log.timestamp, GRAINS[g]),
          is_test: log.is_test,
          value_text: value,
          log_count: sign,
        });
    }
  };
  const count = (logs: readonly FacetSource[]) => {
    for (const log of logs) {
      const org = log.organization_id;
      const prefixes = GRAINS.map(
        (grain) => `${org.length}:${org}${grain}:${bucketOf(log.timestamp, grain)}:${log.is_test}:`,
      );
      for (const f of FACET_FIELDS) {
        const value = log.columns[f.column];
        if (value !== null && value !== undefined) add(log, prefixes, f.name, String(value));
      }
      for (const m of log.metadata) add(log, prefixes, `metadata__${m.key}`, m.value_text);
    }
  };
  count(added);
  sign = -1;
  count(removed);
  return [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, d]) => d);
}

/** Rows per INSERT: 7 parameters each, well under both drivers' parameter limits. */
const CHUNK = 500;

/** Applies deltas through Kysely (PostgreSQL, and SQLite outside the log-writing thread). */
export async function applyFacetDeltas(trx: Transaction<Database> | Kysely<Database>, deltas: FacetDelta[]) {
  const changes = deltas.filter((d) => d.log_count !== 0);
  for (let i = 0; i < changes.length; i += CHUNK) {
    await trx
      .insertInto('log_facets')
      .values(changes.slice(i, i + CHUNK))
      .onConflict((oc) =>
        oc
          .columns(['organization_id', 'field', 'grain_ms', 'bucket_start', 'is_test', 'value_text'])
          .doUpdateSet({ log_count: sql`log_facets.log_count + excluded.log_count` }),
      )
      .execute();
  }
  // Rows that dropped to zero (a deleted log, replaced metadata) would only be summed as noise.
  for (const d of deltas.filter((x) => x.log_count <= 0)) {
    await trx
      .deleteFrom('log_facets')
      .where('organization_id', '=', d.organization_id)
      .where('field', '=', d.field)
      .where('grain_ms', '=', d.grain_ms)
      .where('bucket_start', '=', d.bucket_start)
      .where('is_test', '=', d.is_test)
      .where('value_text', '=', d.value_text)
      .where('log_count', '<=', 0)
      .execute();
  }
}

/** The same upsert as one prepared statement, for the SQLite log-writing thread. */
export const SQLITE_FACET_UPSERT =
  'insert into log_facets (organization_id, field, grain_ms, bucket_start, is_test, value_text, log_count) ' +
  'values (?, ?, ?, ?, ?, ?, ?) on conflict (organization_id, field, grain_ms, bucket_start, is_test, value_text) ' +
  'do update set log_count = log_facets.log_count + excluded.log_count';
