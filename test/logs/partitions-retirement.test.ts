/**
 * A month past every retention on PostgreSQL when things go wrong (src/retention/month-retirement.ts,
 * retired-walk.ts): a database so busy that the detachment never gets its lock sees the month's logs go
 * by rows after a few tries, with their counts and rollups, and the report says so; a walk of retired
 * logs cut short (as by a restart) is taken up by a new sweep where it stopped, each log counted once.
 * PostgreSQL only (SQLite keeps one table).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { logMonths, monthStart, partitionName } from '../../src/db/log-partitions.js';
import { createLogger } from '../../src/logger.js';
import type { RetirementTuning } from '../../src/retention/month-retirement.js';
import { RetentionSweep } from '../../src/retention/sweep.js';
import { testDialect } from '../support/database.js';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';
import { assertFacetsMatch, DAY, iso, leftOf, listed, seed, tables } from '../support/log-months.js';
import { assertRollupsMatch } from '../support/rollup-check.js';

const skip = testDialect !== 'postgres' && 'PostgreSQL only';
const now = Date.now();
const everything = [now - 400 * DAY, now + DAY] as const;
const yyyymm = (lo: number) => iso(lo).slice(0, 7);

function sweepOf(t: TestApp, retirement: Partial<RetirementTuning>): RetentionSweep {
  return new RetentionSweep(
    t.db,
    { retentionDays: 30, contentRetentionDays: 0, intervalMs: 3_600_000, retirement },
    createLogger('silent'),
    null,
  );
}

async function idsOf(t: TestApp, uniqueIds: string[]): Promise<number[]> {
  const rows = await t.db.db.selectFrom('logs').select('id').where('unique_id', 'in', uniqueIds).execute();
  return rows.map((r) => Number(r.id));
}

/** Logs of `who` in `month` with a score on the first, indexed for search; answers their ids both ways. */
async function seedMonth(t: TestApp, who: Tenant, month: number, count: number) {
  const at = Array.from({ length: count }, (_, i) => month + (2 + i) * DAY);
  const uniqueIds = await seed(t, who, at, 'old-model');
  const evaluator = await api(t.baseUrl, 'POST', '/api/evaluators/', { key: who.key, body: { name: `q${month}` } });
  assert.equal(evaluator.status, 201, evaluator.text);
  const score = await api(t.baseUrl, 'POST', `/api/logs/${uniqueIds[0]}/scores/`, {
    key: who.key,
    body: { evaluator_id: evaluator.body.id, numerical_value: 4 },
  });
  assert.equal(score.status, 201, score.text);
  await t.searchIndexer.catchUp();
  return { uniqueIds, ids: await idsOf(t, uniqueIds) };
}

describe('a month whose detachment never gets its lock', { skip }, () => {
  let t: TestApp;
  let a: Tenant;
  let b: Tenant;
  const month = monthStart(now, -3);
  // Another connection reads the month all along: a long query holds its lock as this one does.
  let holder: pg.Client;

  before(async () => {
    t = await startApp({ env: { GATELOG_RETENTION_INTERVAL_S: '3600' } });
    [a, b] = [await t.tenant(), await t.tenant()];
    holder = new pg.Client({ connectionString: t.database.url });
    await holder.connect();
  });
  after(async () => {
    await holder.end();
    await t.close();
  });

  it('waits for it, then deletes the logs by rows with their counts and rollups, and detaches it when it can', async () => {
    const oldA = await seedMonth(t, a, month, 3);
    const oldB = await seed(t, b, [month + 9 * DAY], 'old-model');
    const recentA = await seed(t, a, [now - 2 * DAY], 'recent-model');
    const sweep = sweepOf(t, { detachTries: 2, detachRetryMs: 0 });
    const expect = (way: string) => [{ month: yyyymm(month), way }];

    await holder.query('begin');
    // ACCESS SHARE, the lock any read takes, is enough to hold off DETACH's ACCESS EXCLUSIVE.
    await holder.query(`lock table ${partitionName('logs', month)} in access share mode`);
    const first = await sweep.run();
    assert.ok(first);
    assert.equal(first.error, null);
    assert.deepEqual(first.months, expect('busy'));
    assert.equal(first.deleted_logs, 0, 'its logs wait for the detachment');
    assert.deepEqual(await listed(t, a, ...everything), [...oldA.uniqueIds, ...recentA].sort());

    const second = await sweep.run();
    assert.ok(second);
    assert.equal(second.error, null);
    assert.deepEqual(second.months, expect('by_rows'));
    assert.equal(second.deleted_logs, 4, "the month's logs of both organizations, by rows");
    assert.deepEqual(await listed(t, a, ...everything), recentA);
    assert.deepEqual(await listed(t, b, ...everything), []);
    assert.equal(await leftOf(t, oldA.ids, [...oldA.uniqueIds, ...oldB]), 0);
    for (const who of [a, b]) {
      await assertRollupsMatch(t.db.db, who.org.id);
      await assertFacetsMatch(t, who);
    }
    assert.ok(
      (await logMonths(t.db.db)).some((m) => m.lo === month),
      'still attached, empty',
    );

    await holder.query('rollback');
    const third = await sweep.run();
    assert.ok(third);
    assert.deepEqual(third.months, expect('detached'));
    assert.equal(third.deleted_logs, 0, 'nothing counted twice');
    assert.deepEqual(await tables(t, `%_p${yyyymm(month).replace('-', '')}`), []);
    const kept = await sql<{ n: number }>`select count(*)::int as n from log_month_retirements`.execute(t.db.db);
    assert.equal(kept.rows[0].n, 0, 'nothing left to remember');
    for (const who of [a, b]) await assertRollupsMatch(t.db.db, who.org.id);
  });
});

describe('a walk of retired logs cut short', { skip }, () => {
  let t: TestApp;
  let a: Tenant;
  const month = monthStart(now, -5);

  before(async () => {
    t = await startApp({ env: { GATELOG_RETENTION_INTERVAL_S: '3600' } });
    a = await t.tenant();
  });
  after(() => t.close());

  it('is taken up by a new sweep where it stopped, each log counted once, and the table dropped', async () => {
    const old = await seedMonth(t, a, month, 5);
    const recent = await seed(t, a, [now - DAY], 'recent-model');
    // One batch of 2 and the run stops, as a restart would stop it.
    const stopped = await sweepOf(t, { walkBatch: 2, walkBatchesPerRun: 1 }).run();
    assert.ok(stopped);
    assert.equal(stopped.error, null);
    assert.deepEqual(stopped.months, [{ month: yyyymm(month), way: 'detached' }]);
    assert.equal(stopped.deleted_logs, 2);
    assert.equal(stopped.complete, false);
    assert.deepEqual(await tables(t, 'logs_retired_%'), [`logs_retired_p${yyyymm(month).replace('-', '')}`]);
    assert.deepEqual(await listed(t, a, ...everything), recent, 'the detached logs are gone at once');

    // A new sweep, as a restarted node makes, knows nothing of the first but what the database keeps.
    const resumed = await sweepOf(t, { walkBatch: 2 }).run();
    assert.ok(resumed);
    assert.equal(resumed.error, null);
    assert.equal(resumed.complete, true);
    assert.equal(stopped.deleted_logs + resumed.deleted_logs, 5, 'each retired log counted once');
    assert.deepEqual(await tables(t, 'logs_retired_%'), []);
    assert.equal(await leftOf(t, old.ids, old.uniqueIds), 0);
    await assertRollupsMatch(t.db.db, a.org.id);
    await assertFacetsMatch(t, a);
  });
});

describe("a retired month's other partitions", { skip }, () => {
  let t: TestApp;
  let a: Tenant;
  const month = monthStart(now, -7);
  const suffix = `p${yyyymm(month).replace('-', '')}`;
  const sides = ['log_customer_rollups', 'log_facets', 'log_metadata', 'log_rollups'];

  before(async () => {
    t = await startApp({ env: { GATELOG_RETENTION_INTERVAL_S: '3600' } });
    a = await t.tenant();
  });
  after(() => t.close());

  it('are detached with its logs and dropped by the walk, not in the detaching transaction', async () => {
    const old = await seedMonth(t, a, month, 3);
    const recent = await seed(t, a, [now - DAY], 'recent-model');
    for (const side of sides) assert.deepEqual(await tables(t, `${side}_${suffix}`), [`${side}_${suffix}`]);

    // A run whose walk has no batch to spend: the detachment alone.
    const detached = await sweepOf(t, { walkBatchesPerRun: 0 }).run();
    assert.ok(detached);
    assert.equal(detached.error, null);
    assert.deepEqual(detached.months, [{ month: yyyymm(month), way: 'detached' }]);
    for (const side of sides) {
      assert.deepEqual(await tables(t, `${side}\\_%${suffix}`), [`${side}_retired_${suffix}`], side);
    }
    assert.deepEqual(await listed(t, a, ...everything), recent, 'the detached logs are gone at once');
    await assertRollupsMatch(t.db.db, a.org.id);
    await assertFacetsMatch(t, a);

    const walked = await sweepOf(t, {}).run();
    assert.ok(walked);
    assert.equal(walked.error, null);
    assert.equal(walked.complete, true);
    assert.equal(walked.deleted_logs, 3);
    for (const side of sides) assert.deepEqual(await tables(t, `${side}\\_%${suffix}`), [], side);
    assert.deepEqual(await tables(t, 'logs_retired_%'), []);
    assert.equal(await leftOf(t, old.ids, old.uniqueIds), 0);
  });
});
