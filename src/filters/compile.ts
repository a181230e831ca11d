/**
 * Filter tree → SQL boolean expression with bound parameters (docs/api.md "Filter language"). Values never enter the SQL
 * text; column names come from the registry only.
 */
import { type RawBuilder, type SqlBool, sql } from 'kysely';
import type { DialectName } from '../db/connect.js';
import { oneOf, textFunctions } from '../db/dialect.js';
import { flattenSql } from '../db/flat-sql.js';
import type { FieldRegistry } from './registry.js';
import type { FilterLeaf, FilterNode, FilterValue } from './types.js';
import { searchTerms } from './search-terms.js';

/**
 * The logs up to `watermark` whose indexed text holds every term: a condition on `logId`, in the search
 * index's own SQL (logs/search/search-store.ts indexedMatch).
 */
export type IndexedSearch = (
  dialect: DialectName,
  logId: RawBuilder<unknown>,
  watermark: number,
  terms: readonly string[],
) => RawBuilder<SqlBool>;

export interface CompileContext {
  dialect: DialectName;
  registry: FieldRegistry;
  organizationId: string;
  /**
   * The list's time range, when its side-table rows carry the log's timestamp: metadata lookups are
   * then bounded by it (same result, since the list keeps only logs of that range).
   */
  timeRange?: { start: number; end: number };
  /**
   * A column of the metadata side table that narrows its lookups to the list's own rows, with its
   * value (the dataset-log list: dataset_id, which leads that table's index).
   */
  sideTableScope?: { column: string; value: string };
  /** How a planned `search` leaf reads the index; needed once a plan found indexed logs (watermark above 0). */
  indexedSearch?: IndexedSearch;
}

/** The side-table conditions besides organization and key: the scope column, the time range. */
function sideTableBounds(ctx: CompileContext) {
  const scope = ctx.sideTableScope
    ? sql` and ${sql.ref(`m.${ctx.sideTableScope.column}`)} = ${ctx.sideTableScope.value}`
    : sql``;
  const range = ctx.timeRange
    ? sql` and m.timestamp >= ${ctx.timeRange.start} and m.timestamp <= ${ctx.timeRange.end}`
    : sql``;
  return sql`${scope}${range}`;
}

type Bool = RawBuilder<SqlBool>;

const TRUE: Bool = sql<SqlBool>`1 = 1`;
const FALSE: Bool = sql<SqlBool>`1 = 0`;

/** Booleans are stored as 0/1 in both dialects. */
const bind = (v: FilterValue) => (typeof v === 'boolean' ? (v ? 1 : 0) : v);

function joinBools(parts: Bool[], op: 'and' | 'or'): Bool {
  if (parts.length === 0) return op === 'and' ? TRUE : FALSE;
  if (parts.length === 1) return parts[0];
  return sql<SqlBool>`(${sql.join(parts, op === 'and' ? sql` and ` : sql` or `)})`;
}

function inList(expr: RawBuilder<unknown>, values: FilterValue[]): Bool {
  if (values.length === 1) return sql<SqlBool>`${expr} = ${bind(values[0])}`;
  return sql<SqlBool>`${expr} in (${sql.join(values.map(bind))})`;
}

const RANGE_SQL = { lt: sql`<`, lte: sql`<=`, gt: sql`>`, gte: sql`>=` } as const;
const SUBSTRING_MATCH = {
  contains: 'contains',
  icontains: 'icontains',
  startswith: 'startsWith',
  endswith: 'endsWith',
} as const;

/** The condition on a value expression for every operator but isnull/not (handled by the caller). */
export function valueCondition(ctx: CompileContext, expr: RawBuilder<unknown>, leaf: FilterLeaf): Bool {
  const text = textFunctions(ctx.dialect);
  const strings = leaf.values.map(String);
  switch (leaf.operator) {
    case '':
    case 'in':
      return inList(expr, leaf.values);
    case 'iexact':
      return text.iequals(expr, strings);
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte':
      return sql<SqlBool>`${expr} ${RANGE_SQL[leaf.operator]} ${bind(leaf.values[0])}`;
    case 'contains':
    case 'icontains':
    case 'startswith':
    case 'endswith': {
      // Any text contains, starts and ends with the empty string.
      if (strings.includes('')) return sql<SqlBool>`${expr} is not null`;
      return text[SUBSTRING_MATCH[leaf.operator]](expr, strings);
    }
    case 'isnull':
    case 'not':
      throw new Error(`operator ${leaf.operator} is compiled by its caller`);
  }
}

function compileColumn(ctx: CompileContext, leaf: FilterLeaf, name: string): Bool {
  const def = ctx.registry.fields.get(name)!;
  const column = sql.ref(`${ctx.registry.table}.${def.column}`);
  if (leaf.operator === 'isnull')
    return leaf.values[0] ? sql<SqlBool>`${column} is null` : sql<SqlBool>`${column} is not null`;
  if (leaf.operator === 'not') return sql<SqlBool>`(${column} is null or not (${inList(column, leaf.values)}))`;
  if (leaf.candidates) {
    if (leaf.candidates.length === 0) return FALSE;
    return sql<SqlBool>`(${inList(column, leaf.candidates)} and ${valueCondition(ctx, column, leaf)})`;
  }
  return valueCondition(ctx, column, leaf);
}

/** Rows of the side table for this key, in this organization, optionally narrowed by a condition. */
function metadataIds(ctx: CompileContext, key: string, condition: Bool | null): RawBuilder<unknown> {
  const table = sql.table(ctx.registry.sideTables.metadata!);
  const where = condition ? sql` and ${condition}` : sql``;
  return sql`(select m.log_id from ${table} as m where m.organization_id = ${ctx.organizationId} and m.key = ${key}${sideTableBounds(ctx)}${where})`;
}

/**
 * The condition on the side-table row `m` for a metadata leaf with a positive operator (the row exists
 * and matches); null for `not` and `isnull`, which are about absent rows too.
 */
export function metadataRowCondition(ctx: CompileContext, leaf: FilterLeaf): Bool | null {
  if (leaf.operator === 'not' || leaf.operator === 'isnull') return null;
  const numeric = ['lt', 'lte', 'gt', 'gte'].includes(leaf.operator);
  return valueCondition(ctx, sql.ref(numeric ? 'm.value_num' : 'm.value_text'), leaf);
}

function compileMetadata(ctx: CompileContext, leaf: FilterLeaf, key: string): Bool {
  const id = sql.ref(`${ctx.registry.table}.id`);
  if (leaf.operator === 'isnull') {
    return leaf.values[0]
      ? sql<SqlBool>`${id} not in ${metadataIds(ctx, key, null)}`
      : sql<SqlBool>`${id} in ${metadataIds(ctx, key, null)}`;
  }
  if (leaf.operator === 'not') {
    return sql<SqlBool>`${id} not in ${metadataIds(ctx, key, inList(sql.ref('m.value_text'), leaf.values))}`;
  }
  const condition = metadataRowCondition(ctx, leaf)!;
  if (leaf.metadataForm === 'exists') {
    const table = sql.table(ctx.registry.sideTables.metadata!);
    // The scope columns let PostgreSQL choose between probing per log and joining an index range.
    return sql<SqlBool>`exists (select 1 from ${table} as m where m.log_id = ${id} and m.organization_id = ${ctx.organizationId} and m.key = ${key}${sideTableBounds(ctx)} and ${condition})`;
  }
  // `+id` serves from no index: SQLite's planner then reads the logs another way and probes the set.
  const probed = leaf.metadataForm === 'probe' && ctx.dialect === 'sqlite' ? sql`+${id}` : id;
  return sql<SqlBool>`${probed} in ${metadataIds(ctx, key, condition)}`;
}

function compileScore(ctx: CompileContext, leaf: FilterLeaf, evaluatorId: string): Bool {
  const id = sql.ref(`${ctx.registry.table}.id`);
  const table = sql.table(ctx.registry.sideTables.scores!);
  const ids = (condition: Bool) =>
    sql`(select s.log_id from ${table} as s where s.evaluator_id = ${evaluatorId} and ${condition})`;
  const value = sql.ref('s.score_value');
  if (leaf.operator === 'not') return sql<SqlBool>`${id} not in ${ids(inList(value, leaf.values))}`;
  return sql<SqlBool>`${id} in ${ids(valueCondition(ctx, value, leaf))}`;
}

/**
 * `search`: the logs up to the watermark whose indexed text holds every term of a value (any value), or
 * one of the matching logs above it that planning found (src/logs/search/search-plan.ts); the index's
 * condition is the context's indexedSearch.
 */
function compileSearch(ctx: CompileContext, leaf: FilterLeaf): Bool {
  if (!leaf.search) throw new Error('a search filter is compiled once planned (planFilter)');
  const termLists = leaf.values.map((v) => searchTerms(String(v)));
  // A blank value has no term to miss: every log matches.
  if (termLists.some((terms) => terms.length === 0)) return TRUE;
  const id = sql.ref(`${ctx.registry.table}.id`);
  const { watermark, tailIds } = leaf.search;
  const parts: Bool[] = [];
  if (watermark > 0) {
    const { indexedSearch } = ctx;
    if (!indexedSearch) throw new Error('a search planned over the index is compiled with its indexedSearch');
    parts.push(...termLists.map((terms) => indexedSearch(ctx.dialect, id, watermark, terms)));
  }
  if (tailIds.length > 0) parts.push(oneOf(ctx.dialect, id, tailIds));
  return joinBools(parts, 'or');
}

function filterCondition(ctx: CompileContext, node: FilterNode): Bool {
  if (node.kind !== 'leaf') {
    return joinBools(
      node.children.map((child) => filterCondition(ctx, child)),
      node.kind,
    );
  }
  const target = node.target;
  if (target.kind === 'metadata') return compileMetadata(ctx, node, target.key);
  if (target.kind === 'score') return compileScore(ctx, node, target.evaluatorId);
  if (target.kind === 'search') return compileSearch(ctx, node);
  return compileColumn(ctx, node, target.name);
}

/**
 * The filter tree as one SQL condition, flattened (src/db/flat-sql.ts): a list compiles it into its count
 * and its page, and a filter may hold thousands of values.
 */
export function compileFilter(ctx: CompileContext, node: FilterNode): Bool {
  return flattenSql(filterCondition(ctx, node));
}
