/** The typed filter tree that both parsers produce and the compiler reads. */

export type FieldType = 'string' | 'integer' | 'number' | 'boolean' | 'datetime';

export const OPERATORS = [
  '',
  'iexact',
  'lt',
  'lte',
  'gt',
  'gte',
  'contains',
  'icontains',
  'startswith',
  'endswith',
  'in',
  'isnull',
  'not',
] as const;
export type Operator = (typeof OPERATORS)[number];

/** A scalar after coercion: text, a number (datetimes as epoch ms), or a boolean. */
export type FilterValue = string | number | boolean;

/** What a filter name refers to once resolved against the registry. */
export type FilterTarget =
  | { kind: 'column'; name: string }
  | { kind: 'metadata'; name: string; key: string }
  | { kind: 'score'; name: string; evaluatorId: string }
  /** `search`: the log's words (src/logs/search/). */
  | { kind: 'search'; name: 'search' };

export interface FilterLeaf {
  kind: 'leaf';
  target: FilterTarget;
  operator: Operator;
  values: FilterValue[];
  /**
   * When set: every value of the column that can match (found in the facet counts, src/logs/
   * facet-candidates.ts). Compiled as an extra `in (...)` so an index on the column serves the leaf;
   * the leaf's own condition still decides.
   */
  candidates?: string[];
  /**
   * For a metadata__ leaf: `exists` tests each candidate log through the side table's primary key
   * instead of collecting every matching side-table row first — better when the value is common
   * (src/logs/metadata-plan.ts). `probe` collects them, but only to test each log the other conditions
   * (or the scope) lead to: SQLite would otherwise read every collected log by its id, wide row and all,
   * which is slow when the value is common and most of its logs fail the other conditions anyway
   * (PostgreSQL plans the collected set as a join either way: the same SQL as the default form).
   */
  metadataForm?: 'exists' | 'probe';
  /**
   * For a `search` leaf, set when the filter is planned (src/logs/search/search-plan.ts): the logs up to
   * `watermark` are matched through the index, and `tailIds` are the matching logs above it, found by
   * reading them. A search leaf cannot be compiled unplanned.
   */
  search?: { watermark: number; tailIds: number[] };
}

export interface FilterGroup {
  kind: 'and' | 'or';
  children: FilterNode[];
}

export type FilterNode = FilterLeaf | FilterGroup;

export const and = (children: FilterNode[]): FilterGroup => ({ kind: 'and', children });
export const or = (children: FilterNode[]): FilterGroup => ({ kind: 'or', children });
