/**
 * The time order (docs/decisions.md "Time order"): logs sent through the logging API with their own past
 * timestamps, out of order (a backfill), come back in the order of their timestamps — by the list's
 * default sort, by sort_by=-id and -timestamp (the same order), page after page, and in the export —
 * and logs of the same millisecond in the order they were stored.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EXPORT_CHUNK } from '../../src/http/routes/export.js';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';
import { rng } from '../support/rng.js';

/** More than two export chunks, so that the export's keyset crosses chunk boundaries. */
const TOTAL = EXPORT_CHUNK * 2 + 37;

interface Sent {
  unique_id: string;
  timestamp: number;
  /** The order it was stored in. */
  stored: number;
  cost: number;
}

describe('time order of logs sent with their own timestamps', () => {
  let t: TestApp;
  let a: Tenant;
  const now = Date.now();
  const start = new Date(now - 8 * 24 * 3600_000).toISOString();
  const sent: Sent[] = [];

  before(async () => {
    t = await startApp();
    a = await t.tenant();
    const r = rng(20261125);
    // Three logs per millisecond (the ties, which a chunk boundary of the export splits: 500 is not a
    // multiple of 3), spread over seven days, sent in a random order.
    const logs = Array.from({ length: TOTAL }, (_, k) => ({
      timestamp: now - 7 * 24 * 3600_000 + Math.floor(k / 3) * 577_123,
      cost: (k % 2) / 100,
    }));
    for (let i = logs.length - 1; i > 0; i--) {
      const j = Math.floor(r.next() * (i + 1));
      [logs[i], logs[j]] = [logs[j], logs[i]];
    }
    for (let at = 0; at < logs.length; at += 400) {
      const batch = logs.slice(at, at + 400);
      const res = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', {
        key: a.key,
        body: batch.map((l) => ({
          model: 'backfill',
          cost: l.cost,
          input: 'q',
          output: 'a',
          timestamp: new Date(l.timestamp).toISOString(),
        })),
      });
      assert.equal(res.status, 201, res.text);
      res.body.unique_ids.forEach((id: string, i: number) =>
        sent.push({ unique_id: id, timestamp: batch[i].timestamp, stored: sent.length, cost: batch[i].cost }),
      );
    }
    await t.flush();
  });
  after(() => t.close());

  /** The time order: timestamp, then the order of storing. */
  const newestFirst = () =>
    [...sent].sort((x, y) => y.timestamp - x.timestamp || y.stored - x.stored).map((s) => s.unique_id);

  const list = async (query: string) => {
    const res = await api(t.baseUrl, 'GET', `/api/request-logs/list/?start_time=${start}${query}`, { key: a.key });
    assert.equal(res.status, 200, res.text);
    return res.body as { count: number; next: string | null; results: { unique_id: string; timestamp: string }[] };
  };

  /** Every page of a list, following `next`, and the ids in the order read. */
  const allPages = async (query: string) => {
    const ids: string[] = [];
    let body = await list(query);
    ids.push(...body.results.map((i) => i.unique_id));
    while (body.next) {
      const res = await api(t.baseUrl, 'GET', body.next.slice(body.next.indexOf('/api/')), { key: a.key });
      assert.equal(res.status, 200, res.text);
      body = res.body;
      ids.push(...body.results.map((i) => i.unique_id));
    }
    return ids;
  };

  it('the default sort, -id and -timestamp are newest first by timestamp; id and timestamp oldest first', async () => {
    const expected = newestFirst();
    // The data are out of order by storing: the test means something only if the id order differs.
    assert.notDeepEqual(
      [...sent].reverse().map((s) => s.unique_id),
      expected,
    );
    for (const sort of ['', '&sort_by=-id', '&sort_by=-timestamp']) {
      const body = await list(`&page_size=1000${sort}`);
      assert.equal(body.count, TOTAL);
      const rest = await list(`&page_size=1000&page=2${sort}`);
      assert.deepEqual(
        [...body.results, ...rest.results].map((i) => i.unique_id),
        expected,
        `sort ${sort || 'default'}`,
      );
      const times = body.results.map((i) => Date.parse(i.timestamp));
      assert.ok(
        times.every((time, i) => i === 0 || time <= times[i - 1]),
        'timestamps never rise down the page',
      );
    }
    for (const sort of ['&sort_by=id', '&sort_by=timestamp']) {
      assert.deepEqual(await allPages(`&page_size=1000${sort}`), [...expected].reverse(), sort);
    }
  });

  it('pages hold the time order with no gap and no repeat, for GET and POST', async () => {
    const expected = newestFirst();
    for (const size of [100, 37]) {
      const ids = await allPages(`&page_size=${size}`);
      assert.equal(new Set(ids).size, ids.length, `no repeats at page_size ${size}`);
      assert.deepEqual(ids, expected, `page_size ${size}`);
    }
    const posted: string[] = [];
    for (let page = 1; posted.length < TOTAL; page++) {
      const res = await api(
        t.baseUrl,
        'POST',
        `/api/request-logs/list/?start_time=${start}&page=${page}&page_size=250`,
        {
          key: a.key,
          body: { filters: { model: { operator: '', value: ['backfill'] } } },
        },
      );
      assert.equal(res.status, 200, res.text);
      assert.ok(res.body.results.length > 0, `page ${page} is not empty`);
      posted.push(...res.body.results.map((i: { unique_id: string }) => i.unique_id));
    }
    assert.deepEqual(posted, expected);
  });

  it('ties of another sort follow the time order, in its direction', async () => {
    const byCost = (descending: boolean) =>
      [...sent]
        .sort((x, y) => {
          const d = x.cost - y.cost || x.timestamp - y.timestamp || x.stored - y.stored;
          return descending ? -d : d;
        })
        .map((s) => s.unique_id);
    assert.deepEqual(await allPages('&page_size=500&sort_by=-cost'), byCost(true));
    assert.deepEqual(await allPages('&page_size=500&sort_by=cost'), byCost(false));
  });

  it('the export is newest first by timestamp, as JSON Lines and as CSV, across its chunks', async () => {
    const expected = newestFirst();
    const exported = async (query: string) => {
      const res = await fetch(`${t.baseUrl}/api/request-logs/export/?start_time=${start}${query}`, {
        headers: { authorization: `Bearer ${a.key}` },
      });
      assert.equal(res.status, 200);
      return (await res.text()).split(/\r?\n/).filter(Boolean);
    };
    const jsonl = (await exported('')).map((line) => JSON.parse(line).unique_id);
    assert.deepEqual(jsonl, expected);
    const csv = await exported('&format=csv&fields=unique_id,timestamp');
    assert.equal(csv[0], 'unique_id,timestamp');
    assert.deepEqual(
      csv.slice(1).map((line) => line.split(',')[0]),
      expected,
    );
  });

  it('a log far in the past or the future, and one stamped now, sort by their time too', async () => {
    const b = await t.tenant();
    const send = async (timestamp?: string) => {
      const res = await api(t.baseUrl, 'POST', '/api/request-logs/create/', {
        key: b.key,
        body: { model: 'm', ...(timestamp ? { timestamp } : {}) },
      });
      assert.equal(res.status, 201, res.text);
      return res.body.unique_id as string;
    };
    const future = await send('2999-01-01T00:00:00Z');
    const nowLog = await send();
    const past = await send('1970-01-01T00:00:00.001Z');
    const older = await send('0001-06-01T00:00:00Z');
    await t.flush();
    const res = await api(
      t.baseUrl,
      'GET',
      '/api/request-logs/list/?start_time=0001-01-01T00:00:00Z&end_time=3000-01-01',
      {
        key: b.key,
      },
    );
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.results.map((i: { unique_id: string }) => i.unique_id),
      [future, nowLog, past, older],
    );
  });
});
