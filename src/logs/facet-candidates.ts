/**
 * Substring and case-insensitive filters on a selection field (customer_identifier icontains "acme")
 * cannot use an index: every log of the range would be tested. The facet counts know every value the
 * field took in the range, a few thousand rows at most, so the values that can match are found there
 * first; the filter then also says `column in (those values)`, which the column's index serves.
 */
import { type Kysely, sql } from 'kysely';
import type { DialectName } from '../db/connect.js';
import type { Database } from '../db/schema.js';
import { valueCondition } from '../filters/compile.js';
import { LOG_FIELDS } from '../filters/registry.js';
import type { FilterLeaf, FilterNode } from '../filters/types.js';
import { DAY_MS, bucketOf } from './facets.js';
import type { LogScope } from './list.js';

const NARROWED_OPERATORS = new Set(['iexact', 'contains', 'icontains', 'startswith', 'endswith']);

/** Above this many matching values the filter is not selective enough for an index to help. */
const MAX_CANDIDATES = 500;

export async function narrowByFacets(
  db: Kysely<Database>,
  dialect: DialectName,
  scope: LogScope,
  node: FilterNode,
): Promise<FilterNode> {
  if (node.kind !== 'leaf') {
    const children: FilterNode[] = [];
    for (const child of node.children) children.push(await narrowByFacets(db, dialect, scope, child));
    return { ...node, children };
  }
  const def = node.target.kind === 'column' ? LOG_FIELDS.fields.get(node.target.name) : undefined;
  if (!def?.choices || def.type !== 'string' || !NARROWED_OPERATORS.has(node.operator)) return node;
  const condition = valueCondition(
    { dialect, registry: LOG_FIELDS, organizationId: scope.organizationId, metadataTable: '', scoresTable: '' },
    sql.ref('value_text'),
    node,
  );
  // Daily buckets from the one holding `start`: every value of the range, and perhaps a few more.
  const rows = await db
    .selectFrom('log_facets')
    .select('value_text')
    .distinct()
    .where('organization_id', '=', scope.organizationId)
    .where('field', '=', def.name)
    .where('grain_ms', '=', DAY_MS)
    .where('bucket_start', '>=', bucketOf(scope.start, DAY_MS))
    .where('bucket_start', '<=', scope.end)
    .$if(scope.isTest !== null, (q) => q.where('is_test', '=', scope.isTest ? 1 : 0))
    .where(condition)
    .limit(MAX_CANDIDATES + 1)
    .execute();
  if (rows.length > MAX_CANDIDATES) return node;
  const narrowed: FilterLeaf = { ...node, candidates: rows.map((r) => r.value_text) };
  return narrowed;
}
