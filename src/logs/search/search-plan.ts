/**
 * Planning a `search` leaf (docs/decisions.md "Search index"): the watermark says which logs the index
 * holds; the logs of the list's scope above it (written since the indexer last ran: usually none or a
 * few), and those the indexer set aside, are read here and matched against the same text the index would
 * hold. The compiled filter then
 * reads the index up to the watermark and names the matching newer logs by id: complete and exact
 * whether or not the indexer has caught up.
 */
import { type Kysely, sql } from 'kysely';
import type { DialectName } from '../../db/connect.js';
import type { Database } from '../../db/schema.js';
import type { FilterLeaf, FilterNode } from '../../filters/types.js';
import type { LogScope } from '../list/scope.js';
import { readWatermark, searchSourceColumns } from './search-store.js';
import { searchTerms } from '../../filters/search-terms.js';
import { type SearchSource, searchText, textMatches } from './search-text.js';

/** Logs read per query of the unindexed tail. */
const TAIL_CHUNK = 500;

export async function planSearch(
  db: Kysely<Database>,
  dialect: DialectName,
  scope: LogScope,
  leaf: FilterLeaf,
): Promise<FilterLeaf> {
  const termLists = leaf.values.map((v) => searchTerms(String(v)));
  if (termLists.some((terms) => terms.length === 0)) return { ...leaf, search: { watermark: 0, tailIds: [] } };
  const watermark = await readWatermark(db);
  const tailIds: number[] = [];
  let after = watermark;
  for (;;) {
    // Through the primary key from the watermark on (`+` keeps SQLite off the scope's indexes, which
    // would read every log of the range to find the few new ones; PostgreSQL's planner knows better).
    const plain = (column: string) => (dialect === 'sqlite' ? sql.raw(`+logs.${column}`) : sql.ref(`logs.${column}`));
    const rows = await db
      .selectFrom('logs')
      .select('id')
      .select(searchSourceColumns())
      .where('id', '>', after)
      .where(plain('organization_id'), '=', scope.organizationId)
      .where(plain('timestamp'), '>=', scope.start)
      .where(plain('timestamp'), '<=', scope.end)
      .$if(scope.isTest !== null, (q) => q.where('is_test', '=', scope.isTest ? 1 : 0))
      .orderBy('id')
      .limit(TAIL_CHUNK)
      .execute();
    for (const row of rows) {
      const text = searchText(row as SearchSource);
      if (termLists.some((terms) => textMatches(text, terms))) tailIds.push(Number(row.id));
    }
    if (rows.length < TAIL_CHUNK) break;
    after = Number(rows[rows.length - 1].id);
  }
  // The logs the indexer set aside (the database refused their text; usually none) are below the
  // watermark but not in the index: read and matched here like the newer ones.
  const setAside = await db
    .selectFrom('logs')
    .select('id')
    .select(searchSourceColumns())
    .where('id', 'in', (eb) => eb.selectFrom('search_set_aside').select('log_id').where('log_id', '<=', watermark))
    .where('organization_id', '=', scope.organizationId)
    .where('timestamp', '>=', scope.start)
    .where('timestamp', '<=', scope.end)
    .$if(scope.isTest !== null, (q) => q.where('is_test', '=', scope.isTest ? 1 : 0))
    .execute();
  for (const row of setAside) {
    const text = searchText(row as SearchSource);
    if (termLists.some((terms) => textMatches(text, terms))) tailIds.push(Number(row.id));
  }
  return { ...leaf, search: { watermark, tailIds } };
}

/** Whether a filter has a `search` leaf anywhere. */
export function hasSearch(node: FilterNode): boolean {
  return node.kind === 'leaf' ? node.target.kind === 'search' : node.children.some(hasSearch);
}

/**
 * A filter's `search` leaves planned over these logs alone, read whole (the live tail's new logs, none of
 * them indexed yet): each leaf matches those of them whose text holds its terms.
 */
export function planSearchAmong(node: FilterNode, logs: readonly ({ id: number } & SearchSource)[]): FilterNode {
  if (node.kind !== 'leaf') return { ...node, children: node.children.map((child) => planSearchAmong(child, logs)) };
  if (node.target.kind !== 'search') return node;
  const termLists = node.values.map((v) => searchTerms(String(v)));
  if (termLists.some((terms) => terms.length === 0)) return { ...node, search: { watermark: 0, tailIds: [] } };
  const tailIds = logs
    .filter((log) => {
      const text = searchText(log);
      return termLists.some((terms) => textMatches(text, terms));
    })
    .map((log) => log.id);
  return { ...node, search: { watermark: 0, tailIds } };
}
