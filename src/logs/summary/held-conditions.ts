/**
 * A summary's filter without the conditions that every log of its scope meets, as the facet counts show
 * them. The dashboard counts model calls only (`log_type in chat, completion, …`); in a window with no
 * trace spans that condition holds for every log, and dropped it leaves the summary on its fast path:
 * top groups summed from the facet counts rather than from a pass over the logs (summary.ts topGroups).
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { LOG_FIELDS } from '../../filters/registry.js';
import { and, type FilterLeaf, type FilterNode } from '../../filters/types.js';
import { anyColumnValue } from '../list/filter-options.js';
import type { LogScope } from '../list/scope.js';

/**
 * Whether every log of the scope meets `leaf`: a string field the facet counts keep (its column is NOT
 * NULL, so each log is counted under exactly one value, as its text), compared for equality. One probe
 * that stops at the first log (or facet row) that does not meet it.
 */
async function holdsForEvery(db: Kysely<Database>, scope: LogScope, leaf: FilterLeaf): Promise<boolean> {
  if (leaf.operator !== '' && leaf.operator !== 'in' && leaf.operator !== 'not') return false;
  const def = leaf.target.kind === 'column' ? LOG_FIELDS.fields.get(leaf.target.name) : undefined;
  if (!def?.choices || def.type !== 'string' || def.nullable) return false;
  // Held when no log has a value besides the listed ones (for 'not': none has a listed one).
  const listed = leaf.operator === 'not';
  return !(await anyColumnValue(db, scope, def.name, def.column, leaf.values.map(String), listed));
}

/** The filter (a leaf, or an AND of them) less its conditions that hold for every log; null: none left. */
export async function withoutHeldConditions(
  db: Kysely<Database>,
  scope: LogScope,
  node: FilterNode,
): Promise<FilterNode | null> {
  if (node.kind === 'leaf') return (await holdsForEvery(db, scope, node)) ? null : node;
  if (node.kind !== 'and') return node;
  const left: FilterNode[] = [];
  for (const child of node.children) {
    if (child.kind !== 'leaf' || !(await holdsForEvery(db, scope, child))) left.push(child);
  }
  return left.length === 0 ? null : left.length === 1 ? left[0] : and(left);
}
