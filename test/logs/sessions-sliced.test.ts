/**
 * GET /api/sessions/ over a long window on SQLite sums the sessions in time slices read side by side and
 * merges them (src/logs/sessions/sliced-sessions.ts): the answer must be the one GROUP BY's, field for
 * field, in the same order and with the same count — for both sorts in both directions, every page, a
 * filter, sessions that span the slices' edges, ties (of cost, of last call), and names whose UTF-16
 * order differs from SQLite's. With too many sessions a slice gives the window back to the
 * GROUP BY. On PostgreSQL (no slices) the same comparison holds trivially, and still runs.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { byCodePoint, sessionTuning } from '../../src/logs/sessions/sliced-sessions.js';
import { api, startAppWithTenant, type Tenant, type TestApp } from '../support/harness.js';
import { writeLogBatch } from '../support/logs-api.js';

const MINUTE = 60_000;
/** Names that SQLite orders by their UTF-8 bytes: '\uE000' before '😀', though its UTF-16 unit is above. */
const NAMES = ['s-a', 's-b', 'S-c', 's-\uE000', 's-😀', 's-é', 's-ß', 's-z', 's-0', 's-10', 's-9'];

describe('sessions summed in slices on SQLite, as the one GROUP BY sums them', () => {
  let t: TestApp;
  let a: Tenant;
  const start = Date.now() - 6 * 60 * MINUTE;
  const end = start + 5 * 60 * MINUTE;
  const window = `start_time=${new Date(start).toISOString()}&end_time=${new Date(end).toISOString()}`;
  const at = (minute: number) => new Date(start + minute * MINUTE).toISOString();
  const saved = { ...sessionTuning };

  before(async () => {
    [t, a] = await startAppWithTenant();
    const logs: Record<string, unknown>[] = [];
    NAMES.forEach((name, i) => {
      // Spread over the window, crossing the slices' edges: calls 61 minutes apart.
      const calls = 2 + (i % 3);
      // The names SQLite and JavaScript order differently, and two others, end at the same minute:
      // their order is their names'.
      const last = ['s-\uE000', 's-😀', 's-é', 's-ß', 's-b'].includes(name) ? 250 : 20 + i * 23;
      for (let k = 0; k < calls; k++) {
        logs.push({
          // Sessions costing 0 tie on cost, and then on their last call: their names decide.
          model: i % 4 === 0 ? 'gpt-4o-mini' : 'no-such-model-priced',
          ...(i % 4 === 0 ? { cost: 0.125 * (k + 1) } : i === 3 || i === 6 ? { cost: 0 } : {}),
          prompt_tokens: 10 + k,
          completion_tokens: 3 * k,
          status_code: k === 1 && i % 2 === 0 ? 500 : 200,
          timestamp: at(last - (calls - 1 - k) * 61),
          thread_identifier: name,
        });
      }
    });
    await writeLogBatch(t, a, logs);
  });
  after(async () => {
    Object.assign(sessionTuning, saved);
    await t.close();
  });

  const read = async (query: string, tuning: Partial<typeof sessionTuning>) => {
    Object.assign(sessionTuning, saved, tuning);
    try {
      const res = await api(t.baseUrl, 'GET', `/api/sessions/?${window}&${query}`, { key: a.key });
      assert.equal(res.status, 200, res.text);
      return res.body as { count: number; results: { thread_identifier: string; cost: number }[] };
    } finally {
      Object.assign(sessionTuning, saved);
    }
  };
  const sliced = { slicedFromMs: 0, slices: 3 };
  const unsliced = { slicedFromMs: Number.POSITIVE_INFINITY };
  const rounded = (body: { count: number; results: { cost: number }[] }) => ({
    ...body,
    results: body.results.map((s) => ({ ...s, cost: Math.round(s.cost * 1e9) / 1e9 })),
  });

  for (const sort of ['', 'sort_by=last_seen', 'sort_by=-cost', 'sort_by=cost']) {
    it(`answers as the GROUP BY does, every page (${sort || 'default sort'})`, async () => {
      for (const page of [1, 2, 3, 4]) {
        const query = `${sort}&page_size=4&page=${page}`;
        const one = await read(query, unsliced);
        assert.deepEqual(rounded(await read(query, sliced)), rounded(one), `page ${page}`);
        if (page === 1) assert.equal(one.count, NAMES.length);
      }
    });
  }

  it('with a filter, and when a slice holds more sessions than it may gives the window back whole', async () => {
    const query = 'model=gpt-4o-mini&sort_by=-cost';
    const one = await read(query, unsliced);
    assert.ok(one.count > 1);
    assert.deepEqual(rounded(await read(query, sliced)), rounded(one));
    assert.deepEqual(
      rounded(await read('page_size=5', { ...sliced, mostGroups: 1 })),
      rounded(await read('page_size=5', unsliced)),
    );
  });

  it('orders names by code point, as SQLite does, not by UTF-16 unit', () => {
    assert.ok(byCodePoint('s-\uE000', 's-😀') < 0);
    assert.ok('s-\uE000' > 's-😀', 'JavaScript alone orders them the other way');
    assert.ok(byCodePoint('S-c', 's-a') < 0);
    assert.equal(byCodePoint('s-a', 's-a'), 0);
    assert.ok(byCodePoint('s-1', 's-10') < 0);
  });
});
