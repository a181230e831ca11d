/**
 * Facet counts: how many logs have each value of each selection field (and each metadata key), per
 * organization, environment (is_test) and time bucket, in hourly and daily buckets. filter_options
 * over a long range sums a few thousand of these rows instead of grouping every log of the range
 * (docs/api.md "Listing logs"; bench/README.md). They are changed in the same transaction as the logs they count:
 * when logs are written, when a log is deleted, and when a log's metadata is replaced. Customers'
 * counts are not here: the customers' rollups keep them (CUSTOMER_FIELD below).
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database, LogFacetsTable } from '../db/schema.js';
import { LOG_FIELDS } from '../filters/registry.js';
import { onPostgres, rowsInsert } from '../db/rows-insert.js';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
export const GRAINS = [HOUR_MS, DAY_MS] as const;

/** The log columns whose values filter_options offers (registry entries with `choices`). */
export const FACET_FIELDS = [...LOG_FIELDS.fields.values()]
  .filter((def) => def.choices)
  .map((def) => ({ name: def.name, column: def.column }));

/**
 * The field whose counts the facet rows do not keep: the customers' rollups count each customer's logs
 * per hour and day already (list/facet-rows.ts reads them in its place).
 */
export const CUSTOMER_FIELD = 'customer_identifier';

/** The FACET_FIELDS counted in the facet rows. */
const COUNTED_FIELDS = FACET_FIELDS.filter((f) => f.name !== CUSTOMER_FIELD);

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

/** The facet rows of one organization, environment and time bucket: field → value → change. */
interface FacetGroup {
  /** The start of every row key of this group (see facetDeltas). */
  prefix: string;
  organization_id: string;
  is_test: number;
  grain_ms: number;
  bucket_start: number;
  fields: Map<string, Map<string, FacetDelta>>;
}

/**
 * The changes to the facet counts for adding some logs and removing others, one per distinct row, in
 * a fixed order: concurrent writers then lock rows in the same order (no deadlock).
 */
export function facetDeltas(added: readonly FacetSource[], removed: readonly FacetSource[] = []): FacetDelta[] {
  // Rows are counted per group (organization, environment, bucket), found once per log — and reused
  // while logs share it, as a batch's logs mostly do — then per field and value by plain map lookups:
  // building a string key per field and grain of every log was most of the log-writing thread's JavaScript.
  const groups = new Map<string, FacetGroup>();
  const groupOf = (log: FacetSource, grain: number): FacetGroup => {
    const org = log.organization_id;
    const bucket = bucketOf(log.timestamp, grain);
    // Lengths keep the keys unambiguous whatever characters the free-text parts hold.
    const prefix = `${org.length}:${org}${grain}:${bucket}:${log.is_test}:`;
    let group = groups.get(prefix);
    if (!group) {
      group = {
        prefix,
        organization_id: org,
        is_test: log.is_test,
        grain_ms: grain,
        bucket_start: bucket,
        fields: new Map(),
      };
      groups.set(prefix, group);
    }
    return group;
  };
  let sign = 1;
  const add = (group: FacetGroup, field: string, value: string, count = sign) => {
    let values = group.fields.get(field);
    if (!values) group.fields.set(field, (values = new Map()));
    const existing = values.get(value);
    if (existing) existing.log_count += count;
    else
      values.set(value, {
        organization_id: group.organization_id,
        field,
        grain_ms: group.grain_ms,
        bucket_start: group.bucket_start,
        is_test: group.is_test,
        value_text: value,
        log_count: count,
      });
  };
  const count = (logs: readonly FacetSource[]) => {
    let logGroups: FacetGroup[] = [];
    for (const log of logs) {
      // The previous log's groups, when this one falls in them too.
      const same = logGroups.every(
        (group) =>
          group.organization_id === log.organization_id &&
          group.is_test === log.is_test &&
          group.bucket_start === bucketOf(log.timestamp, group.grain_ms),
      );
      // The smallest grain's group only: the larger grains' counts are summed from its rows below.
      if (!same || logGroups.length === 0) logGroups = [groupOf(log, GRAINS[0])];
      for (const f of COUNTED_FIELDS) {
        const value = log.columns[f.column];
        if (value === null || value === undefined) continue;
        const text = String(value);
        for (const group of logGroups) add(group, f.name, text);
      }
      for (const m of log.metadata) {
        const field = `metadata__${m.key}`;
        for (const group of logGroups) add(group, field, m.value_text);
      }
    }
  };
  count(added);
  sign = -1;
  count(removed);
  for (const group of [...groups.values()]) {
    const source: FacetSource = {
      organization_id: group.organization_id,
      is_test: group.is_test,
      timestamp: group.bucket_start,
      columns: {},
      metadata: [],
    };
    for (const grain of GRAINS.slice(1)) {
      const larger = groupOf(source, grain);
      for (const [field, values] of group.fields) {
        for (const [value, delta] of values) add(larger, field, value, delta.log_count);
      }
    }
  }
  const rows: [key: string, delta: FacetDelta][] = [];
  for (const group of groups.values()) {
    for (const [field, values] of group.fields) {
      for (const [value, delta] of values) rows.push([`${group.prefix}${field.length}:${field}${value}`, delta]);
    }
  }
  return rows.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, d]) => d);
}

/** Rows per INSERT: 7 parameters each, well under both drivers' parameter limits. */
const CHUNK = 500;

/** The facet upsert's end, the same SQL on both databases (the builder below writes it for Kysely). */
export const FACET_CONFLICT =
  'on conflict (organization_id, field, grain_ms, bucket_start, is_test, value_text) ' +
  'do update set log_count = log_facets.log_count + excluded.log_count';

/** Applies deltas: on PostgreSQL as direct SQL (rows-insert.ts), through Kysely on SQLite outside the log-writing thread. */
export async function applyFacetDeltas(trx: Transaction<Database> | Kysely<Database>, deltas: FacetDelta[]) {
  const changes = deltas.filter((d) => d.log_count !== 0);
  const direct = onPostgres(trx);
  for (let i = 0; i < changes.length; i += CHUNK) {
    const some = changes.slice(i, i + CHUNK);
    if (direct) {
      await trx.executeQuery(rowsInsert('log_facets', some, FACET_CONFLICT));
      continue;
    }
    await trx
      .insertInto('log_facets')
      .values(some)
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
  `values (?, ?, ?, ?, ?, ?, ?) ${FACET_CONFLICT}`;
