/**
 * Sessions (docs/api.md "Sessions"): the logs of a list's scope and filters that hold a thread_identifier,
 * grouped by it — a coding agent's session, or any thread a caller named — one page of groups at a time.
 *
 * Two reads. The page: one pass over the window's session logs (migration 0030's partial index on
 * organization, environment and time holds every column it sums, so the pass reads that index only) and
 * a GROUP BY, its number of groups counted in the same pass (`count(*) over ()`). Then the models, keys
 * and customers of the page's sessions only, found through the thread index of the same migration:
 * distinct values of every session of a window would cost more than the page that shows a few of them.
 */
import { type Kysely, type SqlBool, sql } from 'kysely';
import type { DialectName } from '../../db/connect.js';
import type { Database } from '../../db/schema.js';
import type { FilterNode } from '../../filters/types.js';
import { pageOffset, type Paging } from '../../util/paging.js';
import { filteredLogs } from '../list/list.js';
import { planFilter } from '../list/filter-plan.js';
import type { LogScope } from '../list/scope.js';
import { type SessionSort, sessionTuning, slicedSessions } from './sliced-sessions.js';
import { type SessionSums, sessionSumColumns, sumsOf } from './session-sums.js';

export type { SessionSort };

export interface SessionsRequest {
  scope: LogScope;
  filter: FilterNode | null;
  sort: SessionSort;
  paging: Paging;
}

export interface Session {
  thread_identifier: string;
  first_seen: string;
  last_seen: string;
  calls: number;
  errors: number;
  cost: number;
  prompt_tokens: number;
  completion_tokens: number;
  models: string[];
  keys: string[];
  customers: string[];
}

/**
 * A log of some session, as the window's index of session logs says it (migration 0030): on SQLite with
 * a `+`, which keeps its planner off the thread index for this read. An empty thread_identifier (the
 * logging API takes one) names no session, as an empty session header names none.
 */
const inSession = (dialect: DialectName) =>
  dialect === 'sqlite'
    ? sql<SqlBool>`+${sql.ref('logs.thread_identifier')} is not null and +${sql.ref('logs.thread_identifier')} <> ''`
    : sql<SqlBool>`${sql.ref('logs.thread_identifier')} is not null and ${sql.ref('logs.thread_identifier')} <> ''`;

const num = (value: unknown) => Number(value ?? 0);
const iso = (ms: unknown) => new Date(num(ms)).toISOString();

export async function listSessions(
  db: Kysely<Database>,
  dialect: DialectName,
  request: SessionsRequest,
): Promise<{ count: number; sessions: Session[] }> {
  const { scope, sort, paging } = request;
  const filter = request.filter && (await planFilter(db, dialect, scope, request.filter));
  const sessionLogs = (range: LogScope = scope) =>
    filteredLogs(db, dialect, range, filter).where(inSession(dialect)).groupBy('logs.thread_identifier');
  let page: SessionSums[] | null = null;
  let count = 0;
  // One reader thread gains nothing from slices: the GROUP BY pages without holding every session here.
  if (dialect === 'sqlite' && sessionTuning.slices > 1 && scope.end - scope.start + 1 >= sessionTuning.slicedFromMs) {
    const all = await slicedSessions(scope, sessionLogs, sort);
    if (all !== null) {
      page = all.slice(pageOffset(paging), pageOffset(paging) + paging.pageSize);
      count = all.length;
    }
  }
  if (page === null) ({ page, count } = await pageOfSessions(db, sessionLogs(), sort, paging));
  const names = page.map((r) => r.thread_identifier);
  const seen = await valuesOfSessions(db, dialect, scope, filter, names);
  const sessions = page.map((r): Session => {
    const values = seen.get(r.thread_identifier);
    return {
      ...r,
      first_seen: iso(r.first_seen),
      last_seen: iso(r.last_seen),
      models: sorted(values?.models),
      keys: sorted(values?.keys),
      customers: sorted(values?.customers),
    };
  });
  return { count, sessions };
}

/** One page of the groups by SQL (ordered, cut and counted by the database), and their number. */
async function pageOfSessions(
  db: Kysely<Database>,
  sessionLogs: ReturnType<typeof filteredLogs>,
  sort: SessionSort,
  paging: Paging,
): Promise<{ page: SessionSums[]; count: number }> {
  const dir = sort.descending ? sql`desc` : sql`asc`;
  const lastSeen = sql`max(logs.timestamp)`;
  const cost = sql`sum(logs.cost)`;
  const keys = sort.by === 'cost' ? [cost, lastSeen] : [lastSeen];
  let query = sessionLogs.select([
    ...sessionSumColumns(),
    // The number of groups, counted over the groups before the page is cut from them.
    sql<number>`count(*) over ()`.as('total'),
  ]);
  for (const key of keys) query = query.orderBy(sql`${key} ${dir}`);
  const rows = await query
    .orderBy(sql`logs.thread_identifier ${dir}`)
    .limit(paging.pageSize)
    .offset(pageOffset(paging))
    .execute();
  // A page past the end has no row to carry the count.
  const count =
    rows.length > 0
      ? num(rows[0].total)
      : pageOffset(paging) === 0
        ? 0
        : num(
            (
              await db
                .selectFrom(sessionLogs.select('logs.thread_identifier').as('s'))
                .select((eb) => eb.fn.countAll().as('n'))
                .executeTakeFirstOrThrow()
            ).n,
          );
  const page = rows.map((r) => sumsOf(r));
  return { page, count };
}

interface SessionValues {
  models: Set<string>;
  keys: Set<string>;
  customers: Set<string>;
}

const sorted = (values: Set<string> | undefined) => [...(values ?? [])].sort();

/**
 * The distinct models, key names and customers of each named session, among the same logs (scope and
 * filter) the page was summed from; an empty value (a call refused before its model was read, a log
 * without a customer) is none.
 */
async function valuesOfSessions(
  db: Kysely<Database>,
  dialect: DialectName,
  scope: LogScope,
  filter: FilterNode | null,
  names: string[],
): Promise<Map<string, SessionValues>> {
  const found = new Map<string, SessionValues>();
  if (names.length === 0) return found;
  const rows = await filteredLogs(db, dialect, scope, filter)
    .where('logs.thread_identifier', 'in', names)
    .select(['logs.thread_identifier', 'logs.model', 'logs.organization_key_name', 'logs.customer_identifier'])
    .groupBy(['logs.thread_identifier', 'logs.model', 'logs.organization_key_name', 'logs.customer_identifier'])
    .execute();
  for (const row of rows) {
    const name = row.thread_identifier as string;
    let values = found.get(name);
    if (!values) found.set(name, (values = { models: new Set(), keys: new Set(), customers: new Set() }));
    if (row.model) values.models.add(row.model);
    if (row.organization_key_name) values.keys.add(row.organization_key_name);
    if (row.customer_identifier) values.customers.add(row.customer_identifier);
  }
  return found;
}
