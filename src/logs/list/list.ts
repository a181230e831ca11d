/**
 * Listing request logs (docs/api.md "Listing logs"): tenant, environment scope and time range are always applied
 * here; the caller's filter tree and sort come in already parsed and checked.
 */
import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type { DialectName } from '../../db/connect.js';
import type { Database } from '../../db/schema.js';
import { type CompileContext, compileFilter, metadataRowCondition } from '../../filters/compile.js';
import { stoppable } from '../../db/stop-point.js';
import { indexedMatch } from '../search/search-store.js';
import { LOG_FIELDS } from '../../filters/registry.js';
import type { FilterNode } from '../../filters/types.js';
import { pageOffset, type Paging } from '../../util/paging.js';
import { formatCursor, type ListCursor } from './cursor.js';
import { planFilter } from './filter-plan.js';
import { type LogScope, scopeWhere } from './scope.js';
import { fetchPageRows } from './rows.js';
import { type LogItem, presentLog } from '../present.js';
import { scoresOfLogs } from '../repository.js';
import type { ListSort } from '../../filters/sort.js';

export interface ListRequest {
  scope: LogScope;
  filter: FilterNode | null;
  sort: ListSort;
  paging: Paging;
  /** include_fields: the item fields asked for, read whole; null for every field, large ones as previews. */
  include: readonly string[] | null;
  /** count=false: the matches are not counted (count null), which spares a list its costliest query. */
  countMatches?: boolean;
  /** cursor: the page starts after this place in the time order (sort_by id or timestamp only). */
  after?: ListCursor | null;
}

/** Whether a sort is the time order, which a keyset cursor pages through. */
export const isTimeOrder = (sort: ListSort): boolean => sort.kind === 'column' && sort.column === 'timestamp';

type LogsQuery = SelectQueryBuilder<Database, 'logs', object>;

/** Above this many matches, a page sorted by an indexed column reads that index instead of sorting the matches. */
const INDEX_WALK_THRESHOLD = 10_000;

/** Sort columns with an index of their own (migrations 0002 and 0004). */
const INDEXED_SORT_COLUMNS = new Set(['timestamp', 'cost', 'latency']);

/** Columns that are never null need no NULLS LAST, which lets an index serve the ORDER BY. */
const NULLABLE_SORT_COLUMNS = new Set(['time_to_first_token']);

const compileContext = (dialect: DialectName, scope: LogScope): CompileContext => ({
  dialect,
  registry: LOG_FIELDS,
  organizationId: scope.organizationId,
  timeRange: { start: scope.start, end: scope.end },
  indexedSearch: indexedMatch,
});

/** A filter compiled for one list call's scope: its count and its page hold the same condition. */
type FilterCondition = ReturnType<typeof compileFilter>;

/** A filter compiled for a scope; its columns are read on `logs` (or a table aliased so: the rollups). */
export const filterCondition = (dialect: DialectName, scope: LogScope, filter: FilterNode | null) =>
  filter && compileFilter(compileContext(dialect, scope), filter);

// Stoppable on SQLite (db/stop-point.ts): a filter may test every log of a long range at great cost.
const conditionOf = (dialect: DialectName, scope: LogScope, filter: FilterNode | null) =>
  filter && stoppable(dialect, sql.ref('logs.id'), compileFilter(compileContext(dialect, scope), filter));

function logsWhere(db: Kysely<Database>, scope: LogScope, condition: FilterCondition | null, seekByTime = true) {
  const query: LogsQuery = db.selectFrom('logs').where((eb) => scopeWhere(eb, scope, seekByTime));
  return condition ? query.where(condition) : query;
}

export function filteredLogs(
  db: Kysely<Database>,
  dialect: DialectName,
  scope: LogScope,
  filter: FilterNode | null,
  seekByTime = true,
): LogsQuery {
  return logsWhere(db, scope, conditionOf(dialect, scope, filter), seekByTime);
}

/**
 * ORDER BY for the page. `walkIndex` says how a sort by an indexed column should run: reading that
 * column's index in order (many matches), or — written `column + 0`, which no index serves — sorting
 * the few matches found through the time-range index; without the hint both planners sometimes walk a
 * whole index looking for matches that are not there.
 *
 * Every sort ends in the time order, timestamp then id (docs/decisions.md "Time order"): sort `id` and
 * `timestamp` are that order itself, and the ties of any other sort follow it. The id only orders logs
 * of the same millisecond, so a log sent with a past timestamp sits where its time puts it.
 */
function ordered(query: LogsQuery, sort: ListSort, walkIndex: boolean) {
  const dir = sort.descending ? sql`desc` : sql`asc`;
  const timeOrder = (q: LogsQuery) => q.orderBy(sql`logs.timestamp ${dir}`).orderBy(sql`logs.id ${dir}`);
  if (sort.kind === 'score') {
    return query
      .leftJoin(
        (eb) =>
          eb
            .selectFrom('scores')
            .select(['scores.log_id', 'scores.score_value'])
            .where('scores.evaluator_id', '=', sort.evaluatorId)
            .as('sort_score'),
        (join) => join.onRef('sort_score.log_id', '=', 'logs.id'),
      )
      .orderBy(sql`sort_score.score_value ${dir} nulls last`)
      .orderBy(sql`logs.timestamp ${dir}`)
      .orderBy(sql`logs.id ${dir}`);
  }
  const column = sql.ref(`logs.${sort.column}`);
  const key = INDEXED_SORT_COLUMNS.has(sort.column) && !walkIndex ? sql`${column} + 0` : column;
  if (sort.column === 'timestamp') return query.orderBy(sql`${key} ${dir}`).orderBy(sql`logs.id ${dir}`);
  const nulls = NULLABLE_SORT_COLUMNS.has(sort.column) ? sql` nulls last` : sql``;
  return timeOrder(query.orderBy(sql`${key} ${dir}${nulls}`));
}

/**
 * A filter that is one positive metadata__ leaf (possibly inside single-child groups), with its
 * condition on the side-table row; null for any other filter.
 */
function loneMetadataLeaf(dialect: DialectName, scope: LogScope, filter: FilterNode | null) {
  let node = filter;
  while (node && node.kind !== 'leaf' && node.children.length === 1) node = node.children[0];
  if (node?.kind !== 'leaf' || node.target.kind !== 'metadata') return null;
  const condition = metadataRowCondition(compileContext(dialect, scope), node);
  return condition ? { leaf: node, key: node.target.key, condition } : null;
}

type LoneMetadataLeaf = NonNullable<ReturnType<typeof loneMetadataLeaf>>;

/**
 * The number of matches. Filtered by one metadata value alone, they are counted from the side table's
 * index, whose rows repeat their log's scope (organization, timestamp, is_test): one index entry per
 * match, no log row read.
 */
async function countLogs(
  db: Kysely<Database>,
  scope: LogScope,
  condition: FilterCondition | null,
  lone: LoneMetadataLeaf | null,
) {
  if (lone) {
    const row = await db
      .selectFrom('log_metadata as m')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('m.organization_id', '=', scope.organizationId)
      .where('m.key', '=', lone.key)
      .where('m.timestamp', '>=', scope.start)
      .where('m.timestamp', '<=', scope.end)
      .$if(scope.isTest !== null, (q) => q.where('m.is_test', '=', scope.isTest ? 1 : 0))
      .where(lone.condition)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }
  const row = await logsWhere(db, scope, condition)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

const hasPerLogMetadataTest = (node: FilterNode | null): boolean =>
  node !== null && (node.kind === 'leaf' ? node.metadataForm === 'exists' : node.children.some(hasPerLogMetadataTest));

/** A page asked for, its filter planned: what both ways of reading a page start from. */
interface PageQuery {
  db: Kysely<Database>;
  dialect: DialectName;
  scope: LogScope;
  filter: FilterNode | null;
  sort: ListSort;
  paging: Paging;
}

/** The number of matches and the ids of the requested page, in order. */
async function matchesAndPage(query: PageQuery): Promise<{ count: number; ids: number[]; last: ListCursor | null }> {
  const { db, dialect, scope, filter, sort, paging } = query;
  const from = pageOffset(paging);
  const lone = loneMetadataLeaf(dialect, scope, filter);
  const condition = conditionOf(dialect, scope, filter);
  // A filter that tests metadata per log is costly to run twice (count, then page): when it matches
  // few logs, collect them all in one pass and page in memory.
  if (!lone && sort.kind === 'column' && sort.column === 'timestamp' && hasPerLogMetadataTest(filter)) {
    const rows = await logsWhere(db, scope, condition)
      .select(['logs.id', 'logs.timestamp'])
      .limit(INDEX_WALK_THRESHOLD + 1)
      .execute();
    if (rows.length <= INDEX_WALK_THRESHOLD) {
      const sign = sort.descending ? -1 : 1;
      const all = rows
        .map((r) => ({ id: Number(r.id), timestamp: Number(r.timestamp) }))
        .sort((a, b) => sign * (a.timestamp - b.timestamp || a.id - b.id));
      const slice = all.slice(from, from + paging.pageSize);
      return { count: all.length, ids: slice.map((r) => r.id), last: slice.at(-1) ?? null };
    }
  }
  const count = await countLogs(db, scope, condition, lone);
  // Many matches sorted by an indexed column: walk that index in order rather than sort them all.
  const walk = sort.kind === 'column' && INDEXED_SORT_COLUMNS.has(sort.column) && count > INDEX_WALK_THRESHOLD;
  // The time order's index is the time range's too (organization, timestamp, id): walking it, the
  // range stays a seek.
  const seekByTime = !walk || (sort.kind === 'column' && sort.column === 'timestamp');
  // A lone metadata value sorted, not walked: collect its side-table rows first, however common.
  const pageCondition =
    !walk && lone ? conditionOf(dialect, scope, { ...lone.leaf, metadataForm: undefined }) : condition;
  // Deferred join: order and page over ids only (index-only where possible); the caller then reads the
  // full rows of just this page.
  const page = await ordered(logsWhere(db, scope, pageCondition, seekByTime), sort, walk)
    .select(['logs.id', 'logs.timestamp'])
    .limit(paging.pageSize)
    .offset(from)
    .execute();
  const end = page.at(-1);
  return {
    count,
    ids: page.map((r) => Number(r.id)),
    last: end ? { timestamp: Number(end.timestamp), id: Number(end.id) } : null,
  };
}

export async function listLogs(
  db: Kysely<Database>,
  dialect: DialectName,
  request: ListRequest,
): Promise<{ count: number | null; items: LogItem[]; nextCursor: string | null; more: boolean }> {
  const { scope, paging, sort } = request;
  const filter = request.filter && (await planFilter(db, dialect, scope, request.filter));
  const query: PageQuery = { db, dialect, scope, filter, sort, paging };
  if (request.countMatches === false || request.after) {
    const { ids, next, more } = await keysetPage(query, request.after ?? null);
    return { count: null, items: await presentedLogs(db, ids, request.include), nextCursor: next, more };
  }
  const { count, ids, last } = await matchesAndPage(query);
  const items = await presentedLogs(db, ids, request.include);
  // The cursor after this page, for a caller that goes on by keyset from a counted first page.
  const more = pageOffset(paging) + ids.length < count;
  const nextCursor = more && isTimeOrder(sort) && last ? formatCursor(last) : null;
  return { count, items, nextCursor, more };
}

/**
 * A page without its count: page_size + 1 ids are read, the one past the page saying whether there is
 * more. After a cursor, the time range is cut at the cursor's time (a seek on the time index) and, of the
 * logs at that very millisecond, only those past its id are kept.
 */
async function keysetPage(
  query: PageQuery,
  after: ListCursor | null,
): Promise<{ ids: number[]; next: string | null; more: boolean }> {
  const { db, dialect, scope, filter, sort, paging } = query;
  const condition = conditionOf(dialect, scope, filter);
  const desc = sort.descending;
  const narrowed =
    after === null
      ? scope
      : desc
        ? { ...scope, end: Math.min(scope.end, after.timestamp) }
        : { ...scope, start: Math.max(scope.start, after.timestamp) };
  const timeOrder = isTimeOrder(sort);
  const rows = await ordered(logsWhere(db, narrowed, condition), sort, timeOrder)
    .$if(after !== null, (q) =>
      q.where((eb) =>
        eb.or([eb('logs.timestamp', desc ? '<' : '>', after!.timestamp), eb('logs.id', desc ? '<' : '>', after!.id)]),
      ),
    )
    .select(['logs.id', 'logs.timestamp'])
    .limit(paging.pageSize + 1)
    .offset(after === null ? pageOffset(paging) : 0)
    .execute();
  const page = rows.slice(0, paging.pageSize);
  const last = page.at(-1);
  const more = rows.length > paging.pageSize;
  const next =
    more && timeOrder && last ? formatCursor({ timestamp: Number(last.timestamp), id: Number(last.id) }) : null;
  return { ids: page.map((r) => Number(r.id)), next, more };
}

/**
 * Every match of a filter, newest first in the time order (timestamp, then id), `chunk` logs at a time
 * (an export): each chunk is the next logs after the last one read (keyset, so no chunk skips or
 * repeats a log while new ones arrive) and their rows, presented as list items. `read` runs each
 * chunk's queries (within a query budget). The caller may empty each chunk as it goes.
 */
export async function* allMatchingLogs(
  db: Kysely<Database>,
  dialect: DialectName,
  scope: LogScope,
  filter: FilterNode | null,
  chunk: number,
  read: <T>(work: () => Promise<T>) => Promise<T>,
): AsyncGenerator<LogItem[]> {
  const planned = filter && (await read(() => planFilter(db, dialect, scope, filter)));
  const condition = conditionOf(dialect, scope, planned);
  type Cursor = { timestamp: number; id: number };
  let last = null as Cursor | null;
  for (;;) {
    const after: Cursor | null = last;
    const items = await read(async () => {
      // After (timestamp, id) = (t, i): the range ends at t, a seek on the time index, and of the logs
      // at t only those below i are left.
      const rows = await logsWhere(
        db,
        after ? { ...scope, end: Math.min(scope.end, after.timestamp) } : scope,
        condition,
      )
        .$if(after !== null, (q) =>
          q.where((eb) => eb.or([eb('logs.timestamp', '<', after!.timestamp), eb('logs.id', '<', after!.id)])),
        )
        .select(['logs.id', 'logs.timestamp'])
        .orderBy('logs.timestamp', 'desc')
        .orderBy('logs.id', 'desc')
        .limit(chunk)
        .execute();
      const end = rows.at(-1);
      last = end ? { timestamp: Number(end.timestamp), id: Number(end.id) } : null;
      return presentedLogs(
        db,
        rows.map((r) => Number(r.id)),
        null,
      );
    });
    // Counted before the caller has it: it may take the logs out as it writes them.
    const got = items.length;
    if (got > 0) yield items;
    if (got < chunk || last === null) return;
  }
}

/** The list items of these logs, in the order given: rows (large fields as previews unless included) and scores. */
async function presentedLogs(db: Kysely<Database>, ids: number[], include: readonly string[] | null) {
  const fetched = await fetchPageRows(db, ids, include);
  const byId = new Map(fetched.map((f) => [Number(f.row.id), f]));
  const rows = ids.map((id) => byId.get(id)).filter((f) => f !== undefined);
  const scores = await scoresOfLogs(
    db,
    rows.map((r) => r.row.id),
  );
  return rows.map((r) => presentLog(r.row, scores.get(r.row.id) ?? {}, r.truncated));
}
