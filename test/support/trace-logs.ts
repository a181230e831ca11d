/** The logs gatelog made of one OpenTelemetry trace, read back through the API as a tenant sees them. */
import assert from 'node:assert/strict';
import { api, type Tenant, type TestApp } from './harness.js';

type Log = Record<string, unknown>;

/** A trace's logs (each read whole), by span name, once every acknowledged log is written. */
export async function traceLogsBySpanName(t: TestApp, who: Tenant, traceId: string): Promise<Map<string, Log>> {
  await t.flush();
  const res = await api(
    t.baseUrl,
    'GET',
    `/api/request-logs/list/?trace_unique_id=${traceId}&start_time=2020-01-01T00:00:00Z&page_size=100`,
    { key: who.key },
  );
  assert.equal(res.status, 200, res.text);
  const byName = new Map<string, Log>();
  for (const item of res.body.results as Log[]) {
    const full = await api(t.baseUrl, 'GET', `/api/request-logs/${String(item.unique_id)}/`, { key: who.key });
    byName.set(String(item.span_name), full.body as Log);
  }
  return byName;
}
