/**
 * The `search` filter (docs/api.md "Filter language") around its index: a log written a moment ago is
 * found before the background indexer has reached it and after; a deleted log leaves the index; the
 * search filters exports and dataset copies too; an operator other than '' is a 400 naming the field.
 * (Its answers against a reference: search/filters-differential.test.ts.)
 */
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { after, before, describe, it } from 'node:test';
import { api, startAppWithTenant, type Tenant, type TestApp } from '../support/harness.js';
import { readWatermark } from '../../src/logs/search/search-store.js';
import { SearchIndexer } from '../../src/logs/search/indexer.js';
import { anHourAgo, foundBySearch, writeLogBatch, highestLogId } from '../support/logs-api.js';

describe('search: the index and the logs it has not reached', () => {
  let t: TestApp;
  let a: Tenant;
  before(async () => ([t, a] = await startAppWithTenant()));
  after(() => t.close());

  const since = anHourAgo;
  const found = (search: string) => foundBySearch(t, a, search);
  const write = (logs: Record<string, unknown>[]) => writeLogBatch(t, a, logs);
  const maxId = () => highestLogId(t);

  it('finds a log written just now, before the background indexer has reached it and after', async () => {
    await write([
      { model: 'gpt-4o', custom_identifier: 'refund', input: 'I want a REFUND for my order', output: 'Sure.' },
      { model: 'gpt-4o', custom_identifier: 'other', input: 'What is the weather?', output: 'Sunny.' },
    ]);
    assert.equal(await readWatermark(t.db.db), 0, 'nothing is indexed yet');
    assert.deepEqual(await found('refund'), ['refund']);
    assert.deepEqual(await found('refund order'), ['refund']);
    assert.deepEqual(await found('refund weather'), []);

    // The indexer of a running server: in the background, once the writer is idle.
    const indexer = new SearchIndexer(t.db, t.writer, null, { intervalMs: 20, idleMs: 20 });
    indexer.start();
    try {
      const target = await maxId();
      const deadline = Date.now() + 10_000;
      while ((await readWatermark(t.db.db)) < target) {
        assert.ok(Date.now() < deadline, 'the indexer reached the logs written');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.deepEqual(await found('refund'), ['refund']);
      assert.deepEqual(await found('SUNNY'), ['other']);

      // A log written after the watermark is found at once, beside the indexed ones.
      await write([{ model: 'gpt-4o', custom_identifier: 'refund-2', output: 'Your refund is on its way' }]);
      assert.deepEqual(await found('refund'), ['refund', 'refund-2']);
    } finally {
      await indexer.stop();
    }
  });

  it('forgets a deleted log', async () => {
    await write([{ model: 'gpt-4o', custom_identifier: 'to-delete', input: 'unrepeatable zanzibar text' }]);
    await t.searchIndexer.catchUp();
    const [log] = (
      await api(t.baseUrl, 'GET', `/api/request-logs/list/?start_time=${since()}&search=zanzibar`, { key: a.key })
    ).body.results;
    assert.equal(log.custom_identifier, 'to-delete');
    const id = await maxId();
    const indexed = async () => {
      const key = sql.ref(t.db.dialect === 'postgres' ? 'log_id' : 'rowid');
      const res = await sql<{ n: number }>`select count(*) as n from log_search where ${key} = ${id}`.execute(t.db.db);
      return Number(res.rows[0].n);
    };
    assert.equal(await indexed(), 1);
    const deleted = await api(t.baseUrl, 'DELETE', `/api/request-logs/${log.unique_id}/`, { key: a.key });
    assert.equal(deleted.status, 204, deleted.text);
    assert.deepEqual(await found('zanzibar'), []);
    assert.equal(await indexed(), 0, 'its words are gone from the index');
  });

  it('filters exports and dataset copies', async () => {
    await write([
      { model: 'gpt-4o', custom_identifier: 'exp-1', input: 'Ünïcode straße 退款政策' },
      { model: 'gpt-4o', custom_identifier: 'exp-2', input: 'plain ascii' },
    ]);
    const exported = await api(
      t.baseUrl,
      'GET',
      `/api/request-logs/export/?start_time=${since()}&search=${encodeURIComponent('ÜNÏ 退款')}`,
      { key: a.key },
    );
    assert.equal(exported.status, 200, exported.text);
    const lines = exported.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      lines.map((l) => l.custom_identifier),
      ['exp-1'],
    );

    const dataset = await api(t.baseUrl, 'POST', '/api/datasets/', {
      key: a.key,
      body: {
        name: 'refunds',
        initial_log_filters: { search: { value: ['STRASSE', 'straße'] } },
        start_time: since(),
        end_time: new Date(Date.now() + 60_000).toISOString(),
      },
    });
    assert.equal(dataset.status, 201, dataset.text);
    assert.equal(dataset.body.log_count, 1, dataset.text);
  });

  it('takes operator "" only: any other is a 400 naming the field', async () => {
    const body = await api(t.baseUrl, 'POST', '/api/request-logs/list/', {
      key: a.key,
      body: { filters: { search: { operator: 'icontains', value: 'refund' } } },
    });
    assert.equal(body.status, 400, body.text);
    assert.equal(body.body.param ?? body.body.error?.param, 'filters.search.operator', body.text);
    assert.match(body.text, /search/);
    const url = await api(t.baseUrl, 'GET', '/api/request-logs/list/?search[value]=refund&search[operator]=not', {
      key: a.key,
    });
    assert.equal(url.status, 400, url.text);
    assert.match(url.text, /search\[operator\]/);
  });
});
