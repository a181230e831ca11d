/**
 * Summary, facet and list calls whose client goes away stop on the database, not only in gatelog
 * (docs/api.md "Limits"): on PostgreSQL every statement of the call is cancelled (pg_stat_activity
 * shows none left), on SQLite every reader thread the call took — each time slice of a sliced read —
 * stops its statement and exits. The calls are made slow with filters every log must be tested
 * against, far slower than the bound in which their work must stop.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { createMonthsOf } from '../../src/db/log-partitions.js';
import type { Database } from '../../src/db/schema.js';
import { SQLITE_READERS } from '../../src/db/sqlite-read-dialect.js';
import { createRoleOwnedTestDatabase, testDialect } from '../support/database.js';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';
import { poll } from '../support/poll.js';
import { createStandInReplica, type StandInReplica } from '../support/read-replica.js';
import { stallBoundMs } from '../support/responsive.js';

const LOGS = 120_000;
const DAY = 86_400_000;
const MODELS = 5;

/** Text fields (filter name, column) that every seeded log fills with `seed-N`. */
const TEXT_FIELDS = [
  ['unique_id', 'unique_id'],
  ['custom_identifier', 'custom_identifier'],
  ['thread_identifier', 'thread_identifier'],
  ['prompt_id', 'prompt_id'],
  ['trace_unique_id', 'trace_unique_id'],
  ['span_name', 'span_name'],
  ['span_workflow_name', 'span_workflow_name'],
  ['deployment_name', 'deployment_name'],
  ['customer_email', 'customer_email'],
  ['foundation_model', 'foundation_model'],
  ['organization_key__name', 'organization_key_name'],
  ['error_message', 'error_message'],
] as const;

/** LOGS logs over the last 7 days in MODELS models, written by one INSERT … SELECT. */
async function seed(db: Kysely<Database>, organizationId: string, now: number): Promise<void> {
  const texts = sql.join(TEXT_FIELDS.map(([, column]) => sql.ref(column)));
  const columns = sql`(organization_id, environment, log_type, log_method, model, status_code, status, failed,
    latency, timestamp, start_time, created_at, ${texts})`;
  const step = sql.lit(Math.floor((7 * DAY) / LOGS));
  const at = sql.lit(now);
  const values = (n: ReturnType<typeof sql>) => sql`${organizationId}, 'prod', 'chat', 'logging_api',
    'model-' || (${n} % ${sql.lit(MODELS)}), 200, 'success', 0, (${n} % 1000) / 100.0, ${at} - (${n} * ${step}),
    ${at} - (${n} * ${step}), ${at}, ${sql.join(TEXT_FIELDS.map(() => sql`'seed-' || ${n}`))}`;
  if (testDialect === 'postgres') {
    // Written past the app's writer, which makes a month's partition when its first log comes: in a
    // month's first week, the last one's is made here.
    await createMonthsOf(db, [now - 7 * DAY, now]);
    await sql`insert into logs ${columns} select ${values(sql`g`)} from generate_series(1, ${sql.lit(LOGS)}) as g`.execute(
      db,
    );
    await sql`analyze logs`.execute(db);
  } else {
    await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${LOGS})
      insert into logs ${columns} select ${values(sql`i`)} from n`.execute(db);
  }
}

const absent = (field: string, count: number) => Array.from({ length: count }, (_, i) => `absent-${field}-${i}`);

/**
 * Filters that every log must be tested against, as many substring tests per log as a call may ask for
 * on these fields: each field's 500 values, of which every log meets only the last, on every text field
 * but the last (error_message), which no log meets.
 */
const heavyFilters = () =>
  Object.fromEntries(
    TEXT_FIELDS.map(([field], i) => [
      field,
      {
        operator: 'icontains',
        value: i < TEXT_FIELDS.length - 1 ? [...absent(field, 499), 'seed-'] : absent(field, 500),
      },
    ]),
  );

/**
 * Where the lists read: the primary, or (PostgreSQL) a read replica — a stand-in database that holds the
 * logs, read by a superuser, while the primary's role is not one: a cancel sent through the primary
 * could not stop a statement on the replica's server even if the two were one server, as here.
 */
type Mode = 'primary' | 'read replica';
const modes: Mode[] = testDialect === 'postgres' ? ['primary', 'read replica'] : ['primary'];

for (const mode of modes)
  describe(`calls whose client goes away (reads on the ${mode})`, () => callsWhoseClientGoesAway(mode));

function callsWhoseClientGoesAway(mode: Mode): void {
  let t: TestApp;
  let replica: StandInReplica | null = null;
  /** Where the lists read: the logs are seeded there, and its statements watched. */
  let readDb: Kysely<Database>;
  let tenant: Tenant;
  const range = () => ({
    start_time: new Date(Date.now() - 8 * DAY).toISOString(),
    end_time: new Date(Date.now() + 60_000).toISOString(),
  });
  const rangeQuery = () => new URLSearchParams(range()).toString();

  /**
   * The database's work for the heavy calls: on PostgreSQL the backends (parallel workers too) running
   * a statement with their substring tests; on SQLite the reader threads running a statement, and the
   * ended ones that have not exited yet.
   */
  const working = async (): Promise<{ statements: number; left: number }> => {
    if (testDialect === 'postgres') {
      const rows = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
        where datname = current_database() and state = 'active' and query like '%strpos%'
        and pid <> pg_backend_pid()`.execute(readDb);
      return { statements: rows.rows[0].n, left: rows.rows[0].n };
    }
    const threads = t.db.readerThreads()!;
    return { statements: threads.running, left: threads.running + threads.ending };
  };

  /**
   * Makes a call, waits until the database runs `busy` of its statements side by side, leaves (aborts
   * the request), and waits for the database's work to stop. The bound grows with the machine's load (a
   * stopped statement ends once it gets the CPU to see it has been), measured in real time; each of
   * these statements would run for tens of seconds on an idle machine (SQLite: ~25 s for the summary's
   * two slices; PostgreSQL longer still).
   */
  async function leaveAndWatch(path: string, body: unknown, busy: number): Promise<void> {
    const abort = new AbortController();
    const call = fetch(`${t.baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: abort.signal,
    }).then(
      (res) => res.status,
      () => null,
    );
    let peak = 0;
    const started = await poll(
      async () => {
        peak = Math.max(peak, (await working()).statements);
        return peak >= busy;
      },
      30_000,
      20,
    );
    // (Messages built only on failure: building one awaits the call.)
    if (!started)
      assert.fail(`the database never ran ${busy} statements of the call (${peak}); it answered ${await call}`);
    abort.abort();
    assert.equal(await call, null, 'the call was answered before its client left');
    const left = performance.now();
    const stopped = await poll(async () => (await working()).left === 0, stallBoundMs(2000), 20);
    if (!stopped) {
      const waited = (performance.now() - left).toFixed(0);
      assert.fail(
        `the database still works for the gone client after ${waited} ms: ${JSON.stringify(await working())}`,
      );
    }
  }

  /** Light calls answer after the stopped ones, on every read connection at once. */
  async function stillAnswering(): Promise<void> {
    const filters = { model: { operator: '', value: 'model-1' } };
    const calls = Array.from({ length: 6 }, (_, i) =>
      i % 2 === 0
        ? api(t.baseUrl, 'POST', '/api/request-logs/summary/', { key: tenant.key, body: { ...range(), filters } })
        : api(t.baseUrl, 'POST', `/api/request-logs/facets/?${rangeQuery()}`, { key: tenant.key, body: { filters } }),
    );
    for (const answer of await Promise.all(calls)) assert.equal(answer.status, 200, answer.text.slice(0, 300));
  }

  /** Service log lines: a call stopped for its client's leaving says so. */
  const logLines: Record<string, unknown>[] = [];
  /** Calls marked LEAVE_FIRST wait before their handler until their client has gone; each one is told here. */
  const held: (() => void)[] = [];
  const LEAVE_FIRST = 'x-test-leave-first';

  before(async () => {
    // A budget far longer than the test: the client's leaving alone stops the calls.
    if (mode === 'read replica') replica = await createStandInReplica();
    t = await startApp({
      env: {
        GATELOG_QUERY_TIMEOUT_MS: '300000',
        ...(replica ? { GATELOG_DATABASE_READ_URL: replica.database.url } : {}),
      },
      database: replica ? await createRoleOwnedTestDatabase() : undefined,
      logLines,
      beforeListen: (app) =>
        app.addHook('preHandler', async (request) => {
          if (request.headers[LEAVE_FIRST] === undefined) return;
          const socket = request.raw.socket;
          const gone = new Promise((resolve) => (socket.destroyed ? resolve(null) : socket.once('close', resolve)));
          held.shift()?.();
          await gone;
        }),
    });
    tenant = await t.tenant();
    await replica?.copyTenant(t.db, tenant);
    readDb = replica?.handle.db ?? t.db.db;
    await seed(readDb, tenant.org.id, Date.now());
  });
  after(async () => {
    await t.close();
    await replica?.close();
  });

  // Every reader thread takes a time slice of the summary (SQLite); PostgreSQL's passes of a summary of
  // counts run in transactions of their own.
  it('a summary stops every slice of its read', async () => {
    await leaveAndWatch(
      '/api/request-logs/summary/',
      { ...range(), filters: heavyFilters() },
      testDialect === 'postgres' ? 1 : SQLITE_READERS,
    );
    await stillAnswering();
  });

  // The top groups first (SQLite: in slices), then the groups' pass beside the totals' (PostgreSQL).
  it('a grouped summary with percentiles stops every pass', async () => {
    await leaveAndWatch(
      '/api/request-logs/summary/',
      {
        ...range(),
        filters: heavyFilters(),
        metrics: [{ agg: 'count' }, { field: 'latency', agg: 'p50' }],
        group_by: ['model'],
      },
      testDialect === 'postgres' ? 2 : SQLITE_READERS,
    );
    await stillAnswering();
  });

  // A filter on a facet field besides the heavy ones: two conditions counted side by side.
  it('facet counts stop every count', async () => {
    await leaveAndWatch(
      `/api/request-logs/facets/?${rangeQuery()}`,
      { filters: { ...heavyFilters(), status: { operator: '', value: 'success' } } },
      testDialect === 'postgres' ? 2 : Math.min(2, SQLITE_READERS),
    );
    await stillAnswering();
  });

  // The client leaves while the call is on its way to its reads (authenticated, say): they never begin.
  it('a summary whose client left before its reads began reads nothing', async () => {
    const reached = new Promise<void>((resolve) => held.push(resolve));
    const abort = new AbortController();
    const call = fetch(`${t.baseUrl}/api/request-logs/summary/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json', [LEAVE_FIRST]: '1' },
      body: JSON.stringify({ ...range(), filters: heavyFilters() }),
      signal: abort.signal,
    }).catch(() => null);
    await reached;
    abort.abort();
    await call;
    const stopped = (line: Record<string, unknown>) => line.msg === 'client closed the request before it was answered';
    const bound = stallBoundMs(2000);
    assert.ok(await poll(async () => logLines.some(stopped), bound, 20), `the call went on past ${bound} ms`);
    const left = await working();
    assert.deepEqual(left, { statements: 0, left: 0 });
  });

  it('a list with its filter options stops', async () => {
    await leaveAndWatch(`/api/request-logs/list/?${rangeQuery()}&fetch_filters=true`, { filters: heavyFilters() }, 1);
    await stillAnswering();
  });
}
