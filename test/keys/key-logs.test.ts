/**
 * A key's logs found by its id (docs/api.md "Filter language": `api_key_id`): the calls and logs a key
 * made, across its renames and rotations, in lists and summaries — what a key budget's links follow.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';

describe("a key's logs, by its id", () => {
  let t: TestApp;
  let a: Tenant;
  const call = (key: string, method: string, path: string, body?: unknown) =>
    api(t.baseUrl, method, path, { key, body });
  const makeKey = async (name: string) => {
    const made = await call(a.key, 'POST', '/api/keys/', { name, scopes: ['ingest'] });
    assert.equal(made.status, 201, made.text);
    return made.body as { id: string; key: string };
  };
  const log = async (key: string, name: string) => {
    const res = await call(key, 'POST', '/api/request-logs/create/', { custom_identifier: name, cost: 0.5 });
    assert.equal(res.status, 201, res.text);
  };
  let first: { id: string; key: string };
  let second: { id: string; key: string };

  before(async () => {
    t = await startApp();
    a = await t.tenant();
    first = await makeKey('first');
    second = await makeKey('second');
    await log(first.key, 'first-1');
    await log(second.key, 'second-1');
    // Renamed, then rotated: still the same key, its logs still found by its id.
    assert.equal((await call(a.key, 'PATCH', `/api/keys/${first.id}/`, { name: 'first renamed' })).status, 200);
    const rotated = await call(a.key, 'POST', `/api/keys/${first.id}/rotate/`, {});
    assert.equal(rotated.status, 200, rotated.text);
    await log(rotated.body.key as string, 'first-2');
    await log(a.key, 'admin');
    await t.flush();
  });
  after(() => t.close());

  const names = async (filters: unknown) => {
    const res = await call(a.key, 'POST', '/api/request-logs/list/', { filters });
    assert.equal(res.status, 200, res.text);
    return (res.body.results as { custom_identifier: string }[]).map((r) => r.custom_identifier).sort();
  };

  it('lists the logs of one key, across its rename and rotation', async () => {
    assert.deepEqual(await names({ api_key_id: { value: [first.id] } }), ['first-1', 'first-2']);
    assert.deepEqual(await names({ api_key_id: { value: [second.id] } }), ['second-1']);
    assert.deepEqual(await names({ api_key_id: { operator: 'in', value: [first.id, second.id] } }), [
      'first-1',
      'first-2',
      'second-1',
    ]);
    assert.deepEqual(await names({ api_key_id: { operator: 'not', value: [first.id] } }), ['admin', 'second-1']);
    // The name a log carries is the key's name when it was written.
    assert.deepEqual(await names({ organization_key__name: { value: ['first'] } }), ['first-1']);
  });

  it("sums one key's logs in a summary", async () => {
    const res = await call(a.key, 'POST', '/api/request-logs/summary/', {
      filters: { api_key_id: { value: [first.id] } },
      bucket: '1d',
      metrics: [{ agg: 'count' }, { field: 'cost', agg: 'sum' }],
    });
    assert.equal(res.status, 200, res.text);
    const points = (res.body.series as { points: [number, number | null][] }[]).flatMap((s) => s.points);
    assert.equal(
      points.reduce((n, [count]) => n + count, 0),
      2,
    );
    assert.equal(
      points.reduce((n, [, cost]) => n + (cost ?? 0), 0),
      1,
    );
  });
});
