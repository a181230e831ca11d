/**
 * What the tests of PostgreSQL's monthly partitions share: logs seeded at given instants through the
 * logging API, the logs an organization lists in a window, its facet counts checked against its logs, and
 * the tables of a name.
 */
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { api, type Tenant, type TestApp } from './harness.js';

export const DAY = 86_400_000;
export const iso = (ms: number) => new Date(ms).toISOString();

/** Logs of `model` at the instants `at`, written and flushed; answers their unique_ids. */
export async function seed(t: TestApp, who: Tenant, at: number[], model: string): Promise<string[]> {
  const logs = at.map((ms, i) => ({
    model,
    input: `question ${model} ${i}`,
    output: `answer ${model} ${i}`,
    latency: 0.5 + i,
    cost: 0.01,
    metadata: { tier: model },
    timestamp: iso(ms),
  }));
  const res = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', { key: who.key, body: logs });
  assert.equal(res.status, 201, res.text);
  await t.flush();
  return res.body.unique_ids as string[];
}

/** The unique_ids the organization lists between `from` and `to`, sorted. */
export async function listed(t: TestApp, who: Tenant, from: number, to: number): Promise<string[]> {
  const res = await api(
    t.baseUrl,
    'GET',
    `/api/request-logs/list/?start_time=${iso(from)}&end_time=${iso(to)}&page_size=1000`,
    { key: who.key },
  );
  assert.equal(res.status, 200, res.text);
  return (res.body.results as { unique_id: string }[]).map((r) => r.unique_id).sort();
}

/** Per value of `model`, the facet counts (day grain) against the logs themselves. */
export async function assertFacetsMatch(t: TestApp, who: Tenant): Promise<void> {
  const counted = await sql<{ value_text: string; n: number }>`select value_text, sum(log_count)::int as n
    from log_facets where organization_id = ${who.org.id} and field = 'model' and grain_ms = ${DAY}
    group by value_text having sum(log_count) <> 0 order by value_text`.execute(t.db.db);
  const logs = await sql<{ value_text: string; n: number }>`select model as value_text, count(*)::int as n
    from logs where organization_id = ${who.org.id} group by model order by model`.execute(t.db.db);
  assert.deepEqual(counted.rows, logs.rows);
}

/** The tables (plain or partitioned) whose names are like `like`, sorted. */
export async function tables(t: TestApp, like: string): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select relname as name from pg_class where relname like ${like}
    and relkind in ('r', 'p') order by relname`.execute(t.db.db);
  return rows.map((r) => r.name);
}

/** What is left of the given logs elsewhere: their scores, search text, unique_ids and metadata rows. */
export async function leftOf(t: TestApp, ids: number[], uniqueIds: string[]): Promise<number> {
  const { rows } = await sql<{ n: number }>`select
      (select count(*) from scores where log_id = any(${ids}))
    + (select count(*) from log_search where log_id = any(${ids}))
    + (select count(*) from log_unique_ids where unique_id = any(${uniqueIds}))
    + (select count(*) from log_metadata where log_id = any(${ids})) as n`.execute(t.db.db);
  return Number(rows[0].n);
}
