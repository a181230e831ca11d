/** Every dataset write is one transaction: a failure halfway leaves nothing added and the counts right. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { api, startAppWithTenant, type Tenant, type TestApp } from '../support/harness.js';

describe('dataset writes fail whole', () => {
  let t: TestApp;
  let a: Tenant;
  const call = (method: string, path: string, body?: unknown) => api(t.baseUrl, method, path, { key: a.key, body });

  /** Makes copying scores fail, after the logs and their metadata were copied in the same transaction. */
  async function breakScoreCopies(): Promise<void> {
    if (t.db.dialect === 'sqlite') {
      await sql`create trigger fail_scores before insert on dataset_log_scores begin select raise(abort, 'injected'); end`.execute(
        t.db.db,
      );
    } else {
      await sql`create function fail_scores() returns trigger language plpgsql as $$ begin raise exception 'injected'; end $$`.execute(
        t.db.db,
      );
      await sql`create trigger fail_scores before insert on dataset_log_scores for each row execute function fail_scores()`.execute(
        t.db.db,
      );
    }
  }

  before(async () => ([t, a] = await startAppWithTenant()));
  after(() => t.close());

  it('answers 500 and keeps nothing when a copy fails halfway', async () => {
    const evaluator = (await call('POST', '/api/evaluators/', { name: 'q' })).body.id;
    const ids = (
      await call('POST', '/api/request-logs/batch/', { logs: [{ model: 'a', metadata: { k: 'v' } }, { model: 'b' }] })
    ).body.unique_ids as string[];
    await call('POST', `/api/logs/${ids[0]}/scores/`, { evaluator_id: evaluator, numerical_value: 1 });
    const kept = (await call('POST', '/api/datasets/', { name: 'kept' })).body.id as string;
    await breakScoreCopies();
    const start = new Date(Date.now() - 3600_000).toISOString();
    const created = await call('POST', '/api/datasets/', { name: 'broken', start_time: start });
    assert.equal(created.status, 500, created.text);
    const byIds = await call('POST', `/api/datasets/${kept}/logs/`, { log_ids: ids });
    assert.equal(byIds.status, 500, byIds.text);
    const bulk = await call('POST', `/api/datasets/${kept}/logs/bulk/`, {
      start_time: start,
      end_time: new Date().toISOString(),
    });
    assert.equal(bulk.status, 500, bulk.text);
    const datasets = (await call('GET', '/api/datasets/')).body;
    assert.deepEqual(
      datasets.results.map((d: { name: string }) => d.name),
      ['kept'],
    );
    assert.equal(datasets.results[0].log_count, 0);
    const rows = await t.db.db
      .selectFrom('dataset_logs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const metadata = await t.db.db
      .selectFrom('dataset_log_metadata')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(rows.n), 0);
    assert.equal(Number(metadata.n), 0);
  });
});
