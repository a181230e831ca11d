/**
 * The live tail, GET /api/request-logs/stream/ (docs/api.md "Live tail"): new logs as Server-Sent
 * Events, in id order, with the list's filters and scope; resume with Last-Event-ID; ended by key
 * revocation and by shutdown; a cap per node; a reader that never reads slows nobody; and, on
 * PostgreSQL, a log written through one node arrives on another node's tail.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createApiKey, revokeApiKey } from '../../src/auth/api-keys.js';
import { CommitWindow } from '../../src/logs/tail/commit-window.js';
import { spawnServer, stopServers } from '../support/cli.js';
import { testDialect } from '../support/database.js';
import { api, startApp, startAppWithTwoTenants, type Tenant, type TestApp } from '../support/harness.js';
import { openTail, type Tail, until } from '../support/live-tail.js';

/** Records logs through the logging API (acknowledged once committed); answers their unique_ids. */
async function ingest(baseUrl: string, key: string, logs: Record<string, unknown>[]): Promise<string[]> {
  const res = await api(baseUrl, 'POST', '/api/request-logs/batch/', { key, body: { logs } });
  assert.equal(res.status, 201, res.text);
  return res.body.unique_ids as string[];
}

const uniqueIds = (tail: Tail) => tail.logs().map((l) => l.item.unique_id as string);

function assertIdOrder(tail: Tail) {
  const ids = tail.logs().map((l) => l.id);
  assert.deepEqual(
    ids,
    [...ids].sort((a, b) => a - b),
    'events in id order',
  );
  assert.equal(new Set(ids).size, ids.length, 'each log once');
}

describe('live tail', () => {
  let t: TestApp;
  let a: Tenant;
  let b: Tenant;
  const tails: Tail[] = [];
  const open = async (...args: Parameters<typeof openTail> extends [string, ...infer R] ? R : never) => {
    const tail = await openTail(t.baseUrl, ...args);
    tails.push(tail);
    return tail;
  };

  before(
    async () =>
      ([t, a, b] = await startAppWithTwoTenants({
        env: { GATELOG_TAIL_MAX_CLIENTS: '8', GATELOG_STREAM_KEEPALIVE_MS: '200' },
      })),
  );
  after(async () => {
    for (const tail of tails) tail.close();
    await t.close();
  });

  it('sends each new matching log within a second, in id order, with the list filters and scope', async () => {
    const all = await open(a.key);
    const gpt = await open(a.key, '?model=gpt-tail');
    const orFilter = await open(
      a.key,
      '?model=gpt-tail&customer_identifier[value]=c-9&customer_identifier[connector]=or',
    );
    const tests = await open(a.key, '?is_test=true');
    const both = await open(a.key, '?all_envs=true');
    for (const tail of [all, gpt, orFilter, tests, both]) {
      assert.equal(tail.status, 200);
      assert.match(tail.headers.get('content-type') ?? '', /^text\/event-stream/);
    }
    const testKey = (await createApiKey(t.db.db, { organizationId: a.org.id, name: 'test', isTest: true })).key;

    const written = performance.now();
    const first = await ingest(t.baseUrl, a.key, [
      { model: 'gpt-tail', input: 'one', output: 'x'.repeat(20_000) },
      { model: 'other', customer_identifier: 'c-9' },
      { model: 'other' },
    ]);
    const fromTestKey = await ingest(t.baseUrl, testKey, [{ model: 'gpt-tail' }]);
    await ingest(t.baseUrl, b.key, [{ model: 'gpt-tail' }]);
    const second = await ingest(t.baseUrl, a.key, [{ model: 'gpt-tail' }]);

    await until(
      'every production log of the organization',
      1000 + (performance.now() - written),
      () => all.logs().length >= 4,
    );
    await until('the test log', 1000, () => tests.logs().length >= 1 && both.logs().length >= 5);
    await until('the filtered tails', 1000, () => gpt.logs().length >= 2 && orFilter.logs().length >= 3);
    await new Promise((resolve) => setTimeout(resolve, 300)); // Nothing more arrives.

    assert.deepEqual(uniqueIds(all), [...first, ...second]);
    assert.deepEqual(uniqueIds(gpt), [first[0], ...second]);
    assert.deepEqual(uniqueIds(orFilter), [first[0], first[1], ...second]);
    assert.deepEqual(uniqueIds(tests), fromTestKey);
    assert.deepEqual(new Set(uniqueIds(both)), new Set([...first, ...fromTestKey, ...second]));
    for (const tail of [all, gpt, orFilter, tests, both]) assertIdOrder(tail);

    // Each item is the list's row of that log: large fields as previews.
    const list = await api(t.baseUrl, 'GET', '/api/request-logs/list/?model=gpt-tail&sort_by=id', { key: a.key });
    const row = list.body.results.find((r: { unique_id: string }) => r.unique_id === first[0]);
    assert.deepEqual(gpt.logs()[0].item, row);
    assert.ok(row.truncated_fields.includes('output'));

    // A comment keeps the connection open (every 200 ms here, GATELOG_STREAM_KEEPALIVE_MS).
    await until('a keepalive comment', 1000, () => all.comments.includes('keepalive'));
    for (const tail of [all, gpt, orFilter, tests, both]) tail.close();
  });

  it('refuses a bad filter or Last-Event-ID with a 400 naming it', async () => {
    const badOperator = await open(a.key, '?model[value]=x&model[operator]=icontains');
    assert.equal(badOperator.status, 400);
    const badId = await open(a.key, '', { 'last-event-id': 'abc' });
    assert.equal(badId.status, 400);
    assert.equal((badId.body as { error: { param: string } }).error.param, 'Last-Event-ID');
    const badParam = await open(a.key, '?last_event_id=-1');
    assert.equal(badParam.status, 400);
    const noKey = await fetch(`${t.baseUrl}/api/request-logs/stream/`);
    assert.equal(noKey.status, 401);
    // HEAD says what a GET answers, without opening a tail.
    const head = await fetch(`${t.baseUrl}/api/request-logs/stream/`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${a.key}` },
    });
    assert.equal(head.status, 200);
    assert.match(head.headers.get('content-type') ?? '', /^text\/event-stream/);
  });

  it('resumes after Last-Event-ID (header or last_event_id), then goes on live', async () => {
    const first = await open(a.key, '?model=resume');
    const before = await ingest(t.baseUrl, a.key, [{ model: 'resume' }, { model: 'resume' }]);
    await until('the first logs', 1500, () => first.logs().length === 2);
    const lastId = first.logs()[0].id;
    first.close();
    const missed = await ingest(t.baseUrl, a.key, [{ model: 'resume' }, { model: 'other' }, { model: 'resume' }]);

    const resumed = await open(a.key, '?model=resume', { 'last-event-id': String(lastId) });
    const byParam = await open(a.key, `?model=resume&last_event_id=${lastId}`);
    await until('the backlog', 1500, () => resumed.logs().length === 3 && byParam.logs().length === 3);
    const live = await ingest(t.baseUrl, a.key, [{ model: 'resume' }]);
    await until(
      'the live log after the backlog',
      1500,
      () => resumed.logs().length === 4 && byParam.logs().length === 4,
    );
    const expected = [before[1], missed[0], missed[2], ...live];
    assert.deepEqual(uniqueIds(resumed), expected);
    assert.deepEqual(uniqueIds(byParam), expected);
    assertIdOrder(resumed);
    resumed.close();
    byParam.close();
  });

  it('takes a search among its filters, live and in the backlog after Last-Event-ID', async () => {
    const say = (content: string) => ({ model: 'searched', input: [{ role: 'user', content }] });
    const first = await open(a.key, '?model=searched&search=refund');
    const live = await ingest(t.baseUrl, a.key, [
      say('Where is my REFUND?'),
      say('hello'),
      say('refund policy please'),
    ]);
    await until('the matching logs', 1500, () => first.logs().length === 2);
    assert.deepEqual(uniqueIds(first), [live[0], live[2]]);
    const lastId = first.logs()[0].id;
    first.close();
    const resumed = await open(a.key, '?model=searched&search=policy refund', { 'last-event-id': String(lastId) });
    await until('the backlog', 1500, () => resumed.logs().length === 1);
    assert.deepEqual(uniqueIds(resumed), [live[2]]);
    resumed.close();
  });

  it('ends a tail when its key is revoked', async () => {
    const c = await t.tenant();
    const tail = await open(c.key);
    await ingest(t.baseUrl, c.key, [{ model: 'before-revoke' }]);
    await until('a log', 1500, () => tail.logs().length === 1);
    await revokeApiKey(t.db.db, c.keyId);
    await until('the end of the tail', 3000, () => tail.isEnded());
    assert.deepEqual(tail.events.at(-1), { id: null, event: 'end', data: '{"reason":"key_revoked"}' });
  });

  it(`answers 429 beyond GATELOG_TAIL_MAX_CLIENTS, and a freed slot opens again`, async () => {
    const held = [];
    for (let i = 0; i < 8; i++) held.push(await open(a.key));
    const refused = await open(a.key);
    assert.equal(refused.status, 429);
    assert.equal((refused.body as { error: { type: string } }).error.type, 'rate_limit_error');
    held[0].close();
    let again: Tail | null = null;
    for (let i = 0; i < 50 && again?.status !== 200; i++) {
      again?.close();
      again = await open(a.key);
      if (again.status !== 200) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(again?.status, 200);
    for (const tail of [...held, again!]) tail.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
  });

  it('a reader that never reads slows neither the writer nor the other tails, and is cut off', async () => {
    const reader = await open(a.key, '?model=flood');
    // A tail whose response is never read: the server's buffers for it fill up.
    const stuck = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.get(`${t.baseUrl}/api/request-logs/stream/?model=flood`, {
        headers: { authorization: `Bearer ${a.key}` },
      });
      req.on('response', (res) => {
        res.pause();
        resolve(res);
      });
      req.on('error', reject);
    });
    assert.equal(stuck.statusCode, 200);
    const big = 'y'.repeat(8000);
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      ids.push(
        ...(await ingest(
          t.baseUrl,
          a.key,
          Array.from({ length: 100 }, () => ({ model: 'flood', input: big })),
        )),
      );
      // A reader that reads keeps up with 1.6 MB every 100 ms (this test's process serves and reads).
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await until('every log on the reading tail', 10_000, () => reader.count() === ids.length);
    assert.deepEqual(uniqueIds(reader), ids);
    // 2,000 events of about 16 KB: far past the 8 MB a tail may leave unread. Read now, the stuck tail
    // holds less than that and ends (cut), where a live tail would go on.
    let received = '';
    const closed = new Promise<void>((resolve) => {
      stuck.on('data', (chunk: Buffer) => (received += chunk.toString()));
      stuck.on('close', () => resolve());
      stuck.on('error', () => resolve());
    });
    stuck.resume();
    await Promise.race([
      closed,
      new Promise((_, reject) => setTimeout(() => reject(new Error('the stuck tail was not cut')), 5000)),
    ]);
    assert.ok(received.split('event: log').length - 1 < ids.length, 'the stuck tail did not get everything');
    reader.close();
  });
});

describe('live tail at shutdown', () => {
  it('ends every tail when the server closes, without waiting for them', async () => {
    const t = await startApp();
    const a = await t.tenant();
    const tails = [await openTail(t.baseUrl, a.key), await openTail(t.baseUrl, a.key, '?model=x')];
    const started = performance.now();
    await t.app.close();
    assert.ok(performance.now() - started < 2000, `close took ${performance.now() - started} ms`);
    await Promise.all(tails.map((tail) => tail.ended));
    for (const tail of tails)
      assert.deepEqual(tail.events.at(-1), { id: null, event: 'end', data: '{"reason":"shutdown"}' });
    await t.close();
  });
});

describe('live tail across PostgreSQL nodes', { skip: testDialect !== 'postgres' }, () => {
  it('delivers on one node the logs written through another, each once and in id order', async () => {
    const t = await startApp();
    const a = await t.tenant();
    const other = await spawnServer({
      GATELOG_DATABASE_URL: t.database.url,
      GATELOG_SECRET_KEY: t.secretKey.toString('hex'),
      GATELOG_PORT: '0',
    });
    try {
      const onA = await openTail(t.baseUrl, a.key);
      const onB = await openTail(other.baseUrl, a.key);
      // Both nodes write at once: their transactions commit ids out of order.
      const written = (
        await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            ingest(
              i % 2 === 0 ? t.baseUrl : other.baseUrl,
              a.key,
              Array.from({ length: 10 }, () => ({ model: `n${i}` })),
            ),
          ),
        )
      ).flat();
      await until('every log on both nodes', 3000, () => onA.logs().length >= 200 && onB.logs().length >= 200);
      await new Promise((resolve) => setTimeout(resolve, 500));
      for (const tail of [onA, onB]) {
        assert.deepEqual(new Set(uniqueIds(tail)), new Set(written));
        assert.equal(tail.logs().length, written.length);
      }
      // A single log through node A reaches node B's tail within a second.
      const started = performance.now();
      const [one] = await ingest(t.baseUrl, a.key, [{ model: 'one' }]);
      await until('the log on node B', 1000, () => uniqueIds(onB).includes(one));
      assert.ok(performance.now() - started < 1000);
      onA.close();
      onB.close();
    } finally {
      await stopServers([other]);
      await t.close();
    }
  });
});

describe('CommitWindow (ids committed out of order)', () => {
  it('holds ids after a gap until it fills, passes a gap that stays, and delivers a late id once', () => {
    const w = new CommitWindow(10, { gapWaitMs: 300, settleMs: 3000 });
    assert.deepEqual(w.take([11, 13], 0), [11]);
    assert.deepEqual(w.take([11, 12, 13], 100), [12, 13]);
    assert.deepEqual(w.take([11, 12, 13, 15], 200), []);
    assert.deepEqual(w.take([11, 12, 13, 15], 600), [15]);
    assert.deepEqual(w.take([11, 12, 13, 14, 15], 700), [14]);
    assert.deepEqual(w.take([11, 12, 13, 14, 15, 16], 800), [16]);
    assert.equal(w.floor, 10);
    w.take([11, 12, 13, 14, 15, 16], 4000);
    assert.ok(w.floor >= 15);
  });

  it('delivers at most as many ids as asked, the rest at the next call', () => {
    const w = new CommitWindow(0, { gapWaitMs: 0, settleMs: 0 });
    assert.deepEqual(w.take([1, 2, 3, 4, 5], 0, 2), [1, 2]);
    assert.equal(w.floor, 2);
    assert.deepEqual(w.take([3, 4, 5], 1, 2), [3, 4]);
    assert.deepEqual(w.take([5], 2, 2), [5]);
  });

  it('moves the floor at once when ids commit in order (SQLite)', () => {
    const w = new CommitWindow(0, { gapWaitMs: 0, settleMs: 0 });
    assert.deepEqual(w.take([1, 2, 5], 0), [1, 2, 5]);
    assert.equal(w.floor, 5);
  });
});
