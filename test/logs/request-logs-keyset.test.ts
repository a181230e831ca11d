import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';

interface Item {
  unique_id: string;
  timestamp: string;
  model: string;
}

describe('keyset paging and a list without its count', () => {
  let t: TestApp;
  let a: Tenant;
  const base = Date.parse('2026-11-20T10:00:00.000Z');
  const range = `start_time=${new Date(base - 3_600_000).toISOString()}&end_time=${new Date(base + 3_600_000).toISOString()}`;
  const list = (query: string, body?: unknown) =>
    api(t.baseUrl, body ? 'POST' : 'GET', `/api/request-logs/list/?${range}&${query}`, { key: a.key, body });

  /** Every page of a walk by next_cursor, the ids in the order the pages gave them. */
  async function walk(query: string, body?: unknown, between?: () => Promise<void>): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | null = null;
    for (let n = 0; n < 100; n++) {
      const res = await list(`${query}&count=false${cursor ? `&cursor=${cursor}` : ''}`, body);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.count, null);
      assert.equal(res.body.previous, null);
      ids.push(...(res.body.results as Item[]).map((r) => r.unique_id));
      cursor = res.body.next_cursor;
      if (cursor === null) {
        assert.equal(res.body.next, null);
        return ids;
      }
      assert.match(res.body.next, /[?&]cursor=/);
      await between?.();
    }
    throw new Error('the walk did not end');
  }

  before(async () => {
    t = await startApp();
    a = await t.tenant();
    // 23 logs, several sharing a millisecond (the id orders those), two models.
    const logs = Array.from({ length: 23 }, (_, i) => ({
      model: i % 3 === 0 ? 'keyset-a' : 'keyset-b',
      timestamp: new Date(base - Math.floor(i / 4) * 1000).toISOString(),
    }));
    const res = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', { key: a.key, body: logs });
    assert.equal(res.status, 201);
    await t.flush();
  });
  after(() => t.close());

  it('walks the time order by cursor, in both directions, as the counted list orders it', async () => {
    for (const sort of ['-id', 'id', '-timestamp', 'timestamp']) {
      const whole = await list(`sort_by=${sort}&page_size=100`);
      assert.equal(whole.body.count, 23);
      const expected = (whole.body.results as Item[]).map((r) => r.unique_id);
      assert.deepEqual(await walk(`sort_by=${sort}&page_size=5`), expected, sort);
    }
  });

  it('gives a counted page its next_cursor too, and a cursor continues it', async () => {
    const first = await list('page_size=10');
    assert.equal(first.body.count, 23);
    assert.equal(typeof first.body.next_cursor, 'string');
    const rest = await list(`page_size=100&cursor=${first.body.next_cursor}`);
    const whole = await list('page_size=100');
    assert.deepEqual(
      [...first.body.results, ...rest.body.results].map((r: Item) => r.unique_id),
      (whole.body.results as Item[]).map((r) => r.unique_id),
    );
    assert.equal(rest.body.count, null);
    assert.equal((await list('page_size=100')).body.next_cursor, null);
  });

  it('keeps to the filters (body and URL) while walking', async () => {
    const body = { filters: { model: { operator: '', value: ['keyset-a'] } } };
    const ids = await walk('page_size=3', body);
    const whole = await list('page_size=100', body);
    assert.equal(whole.body.count, 8);
    assert.deepEqual(
      ids,
      (whole.body.results as Item[]).map((r) => r.unique_id),
    );
    assert.deepEqual(await walk('page_size=3&model=keyset-a'), ids);
  });

  it('neither skips nor repeats a log while new ones arrive', async () => {
    const before = (await list('page_size=100')).body.results.map((r: Item) => r.unique_id);
    let added = 0;
    const ids = await walk('page_size=4', undefined, async () => {
      // A newer log than any walked: it is never on a later page of a newest-first walk.
      await api(t.baseUrl, 'POST', '/api/request-logs/create/', {
        key: a.key,
        body: { model: 'late', timestamp: new Date(base + 1000 + added++).toISOString() },
      });
      await t.flush();
    });
    assert.deepEqual(ids, before);
    assert.equal(new Set(ids).size, ids.length);
  });

  it('answers count=false by page number in the other sorts, with next and previous', async () => {
    const first = await list('sort_by=-cost&page_size=10&count=false');
    assert.equal(first.body.count, null);
    assert.equal(first.body.next_cursor, null);
    assert.match(first.body.next, /page=2/);
    const third = await list('sort_by=-cost&page_size=10&page=3&count=false');
    assert.match(third.body.previous, /page=2/);
    const counted = await list('sort_by=-cost&page_size=100');
    const all = [first, await list('sort_by=-cost&page_size=10&page=2&count=false'), third].flatMap(
      (r) => r.body.results as Item[],
    );
    assert.equal(all.length, counted.body.count);
    assert.equal(third.body.next, null);
  });

  it('refuses a cursor it did not make, and a cursor in a sort it cannot follow', async () => {
    for (const cursor of ['nope', 'MTIz', '%20']) {
      const res = await list(`cursor=${cursor}`);
      assert.equal(res.status, 400, cursor);
      assert.equal(res.body.error.param, 'cursor');
    }
    const cursor = (await list('page_size=1')).body.next_cursor;
    const res = await list(`sort_by=-cost&cursor=${cursor}`);
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'cursor');
    assert.match(res.body.error.message, /sort_by id or timestamp/);
    const bad = await list('count=maybe');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.param, 'count');
  });
});
