/**
 * Planning a list filter with the facet counts (facets.ts), which know every value each selection
 * field and metadata key took per day, in a few thousand rows:
 *
 * - Substring and case-insensitive filters on a selection field (customer_identifier icontains "acme")
 *   cannot use an index: every log of the range would be tested. The values that can match are found
 *   in the facet counts first; the filter then also says `column in (those values)`, which the
 *   column's index serves.
 * - A metadata__ filter either collects the matching side-table rows first (best for a rare value) or
 *   tests each log of the range through the side table's primary key (best for a common one); the
 *   facet counts say how common the value is in the range.
 */
import { type Kysely, sql } from 'kysely';
import type { DialectName } from '../../db/connect.js';
import type { Database } from '../../db/schema.js';
import { valueCondition } from '../../filters/compile.js';
import { LOG_FIELDS } from '../../filters/registry.js';
import type { FilterLeaf, FilterNode } from '../../filters/types.js';
import { DAY_MS, bucketOf } from '../facets.js';
import type { LogScope } from './scope.js';
import { planSearch } from '../search/search-plan.js';
import { facetRowsComplete, facetRowsOf } from './facet-rows.js';

const NARROWED_OPERATORS = new Set(['iexact', 'contains', 'icontains', 'startswith', 'endswith']);

/** Above this many matching values the filter is not selective enough for an index to help. */
const MAX_CANDIDATES = 500;

/** Above this share of the range's logs, a metadata value is tested per log rather than collected. */
const COMMON_METADATA_SHARE = 0.05;

export async function planFilter(
  db: Kysely<Database>,
  dialect: DialectName,
  scope: LogScope,
  node: FilterNode,
): Promise<FilterNode> {
  if (node.kind !== 'leaf') {
    const children: FilterNode[] = [];
    for (const child of node.children) children.push(await planFilter(db, dialect, scope, child));
    return { ...node, children };
  }
  if (node.target.kind === 'metadata') return planMetadata(db, dialect, scope, node, node.target.key);
  if (node.target.kind === 'search') return planSearch(db, dialect, scope, node);
  return narrowColumn(db, dialect, scope, node);
}

/** Daily facet rows of one field that can hold logs of the scope (the day holding `start` onward). */
function facetRows(db: Kysely<Database>, scope: LogScope, field: string) {
  return facetRowsOf(db, field)
    .where('f.organization_id', '=', scope.organizationId)
    .where('f.grain_ms', '=', DAY_MS)
    .where('f.bucket_start', '>=', bucketOf(scope.start, DAY_MS))
    .where('f.bucket_start', '<=', scope.end)
    .$if(scope.isTest !== null, (q) => q.where('f.is_test', '=', scope.isTest ? 1 : 0));
}

const contextFor = (dialect: DialectName, scope: LogScope) => ({
  dialect,
  registry: LOG_FIELDS,
  organizationId: scope.organizationId,
});

async function planMetadata(
  db: Kysely<Database>,
  dialect: DialectName,
  scope: LogScope,
  leaf: FilterLeaf,
  key: string,
): Promise<FilterNode> {
  // Text comparisons only: the facet counts hold each value's text form.
  if (!NARROWED_OPERATORS.has(leaf.operator) && leaf.operator !== '' && leaf.operator !== 'in') return leaf;
  const condition = valueCondition(contextFor(dialect, scope), sql.ref('f.value_text'), leaf);
  const sum = sql<number>`sum(f.log_count)`.as('n');
  const [matching, total] = await Promise.all([
    facetRows(db, scope, `metadata__${key}`).select(sum).where(condition).executeTakeFirst(),
    facetRows(db, scope, 'log_type').select(sum).executeTakeFirst(),
  ]);
  const share = Number(matching?.n ?? 0) / Math.max(1, Number(total?.n ?? 0));
  return share > COMMON_METADATA_SHARE ? { ...leaf, metadataForm: 'exists' } : leaf;
}

async function narrowColumn(
  db: Kysely<Database>,
  dialect: DialectName,
  scope: LogScope,
  node: FilterLeaf,
): Promise<FilterNode> {
  const def = node.target.kind === 'column' ? LOG_FIELDS.fields.get(node.target.name) : undefined;
  if (!def?.choices || def.type !== 'string' || !NARROWED_OPERATORS.has(node.operator)) return node;
  // Until the field's stored counts hold every log, they cannot name every value that matches.
  if (!(await facetRowsComplete(db, def.name))) return node;
  const condition = valueCondition(contextFor(dialect, scope), sql.ref('f.value_text'), node);
  // Every value of the range, and perhaps a few more from the edge days.
  const rows = await facetRows(db, scope, def.name)
    .select('f.value_text')
    .distinct()
    .where(condition)
    .limit(MAX_CANDIDATES + 1)
    .execute();
  if (rows.length > MAX_CANDIDATES) return node;
  const narrowed: FilterLeaf = { ...node, candidates: rows.map((r) => r.value_text) };
  return narrowed;
}
