/**
 * The search indexer's pace over a backlog: once a bound is known safe (on PostgreSQL, when the
 * transactions running as it was read have ended), batch follows batch up to it without waiting for
 * another — a wait a batch would cap indexing at one batch a second, below what a busy node writes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startAppWithTenant, type Tenant, type TestApp } from '../support/harness.js';
import { readWatermark } from '../../src/logs/search/search-store.js';
import { SearchIndexer } from '../../src/logs/search/indexer.js';
import { highestLogId, writeLogBatch } from '../support/logs-api.js';

describe('search indexer: a backlog indexed batch after batch', () => {
  let t: TestApp;
  let a: Tenant;
  before(async () => ([t, a] = await startAppWithTenant()));
  after(() => t.close());

  it('indexes full batches back to back up to the safe bound', async () => {
    await writeLogBatch(
      t,
      a,
      Array.from({ length: 30 }, (_, i) => ({ model: 'gpt-4o', input: `backlog question ${i}`, output: 'ok' })),
    );
    const indexer = new SearchIndexer(t.db, null, null, { batchSize: 10 });
    // The first batch: on PostgreSQL once a bound is safe (about a second), on SQLite at once.
    const deadline = Date.now() + 10_000;
    let first = 0;
    while ((first = await indexer.indexBatch()) === 0) {
      assert.ok(Date.now() < deadline, 'a first batch within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(first, 10);
    // The rest at once, each batch full: no new bound is waited for.
    assert.equal(await indexer.indexBatch(), 10);
    assert.equal(await indexer.indexBatch(), 10);
    assert.equal(await readWatermark(t.db.db), await highestLogId(t));
  });
});
