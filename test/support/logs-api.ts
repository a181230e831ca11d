/**
 * Logs through the API, as the log and search tests write and read them again and again: a batch written
 * and stored, many logs posted in batches, the last hour's logs listed by a query or a search, and the
 * highest log id (what the search indexer has to reach).
 */
import assert from 'node:assert/strict';
import { api, type Tenant, type TestApp } from './harness.js';

const HOUR = 3600_000;

/** An hour ago, as the `start_time` of a list: every log a test wrote is after it. */
export const anHourAgo = () => new Date(Date.now() - HOUR).toISOString();

/** Writes `logs` in one batch (which must be accepted) and waits until they are in the database. */
export async function writeLogBatch(t: TestApp, who: Tenant, logs: Record<string, unknown>[]): Promise<void> {
  const res = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', { key: who.key, body: logs });
  assert.equal(res.status, 201, res.text);
  await t.flush();
}

/** Posts `logs` in batches of `perBatch` (each must be accepted), as a client with many logs does. */
export async function postLogsInBatches(t: TestApp, who: Tenant, logs: unknown[], perBatch: number): Promise<void> {
  for (let at = 0; at < logs.length; at += perBatch) {
    const res = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', {
      key: who.key,
      body: logs.slice(at, at + perBatch),
    });
    assert.equal(res.status, 201, res.text);
  }
}

/** The custom_identifier of each of the last hour's logs that the list `query` (URL parameters) answers. */
export async function listedIdentifiers(t: TestApp, who: Tenant, query: string): Promise<string[]> {
  const res = await api(t.baseUrl, 'GET', `/api/request-logs/list/?start_time=${anHourAgo()}&${query}`, {
    key: who.key,
  });
  assert.equal(res.status, 200, res.text);
  return (res.body.results as { custom_identifier: string }[]).map((r) => r.custom_identifier);
}

/** The custom_identifier of each of the last hour's logs `search` finds, sorted. */
export async function foundBySearch(t: TestApp, who: Tenant, search: string): Promise<string[]> {
  return (await listedIdentifiers(t, who, `search=${encodeURIComponent(search)}`)).sort();
}

/** The highest log id in the database, 0 when there is none. */
export async function highestLogId(t: TestApp): Promise<number> {
  const row = await t.db.db
    .selectFrom('logs')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirst();
  return Number(row?.id ?? 0);
}
