/**
 * PostgreSQL's monthly partitions of the logs (docs/scaling.md "Partitions by month"): made ahead of
 * time and on demand for a log of a month without one, unique_id unique over all months, a month past
 * every organization's retention detached whole with its counts and rollups while a shorter retention
 * still deletes row by row. PostgreSQL only (SQLite keeps one table); with CI=true a PostgreSQL that
 * cannot be reached fails the run (scripts/run-tests.mjs).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { logMonths, monthStart } from '../../src/db/log-partitions.js';
import { createLogger } from '../../src/logger.js';
import { RetentionSweep } from '../../src/retention/sweep.js';
import { testDialect } from '../support/database.js';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';
import { assertFacetsMatch, DAY, iso, leftOf, listed, seed, tables } from '../support/log-months.js';
import { assertRollupsMatch } from '../support/rollup-check.js';

describe('monthly partitions of the logs', { skip: testDialect !== 'postgres' && 'PostgreSQL only' }, () => {
  let t: TestApp;
  let a: Tenant;

  before(async () => {
    // The app's own sweep stays away (its first run is a minute off); the tests run their own.
    t = await startApp({ env: { GATELOG_RETENTION_INTERVAL_S: '3600' } });
    a = await t.tenant();
  });
  after(() => t.close());

  it('has the partitions of this month and the next two from the start', async () => {
    const months = (await logMonths(t.db.db)).map((m) => m.lo);
    for (let k = 0; k <= 2; k++) assert.ok(months.includes(monthStart(Date.now(), k)), `month +${k}`);
    const parts = await tables(t, `%_p${new Date().toISOString().slice(0, 4)}%`);
    for (const table of ['logs', 'log_metadata', 'log_facets', 'log_rollups', 'log_customer_rollups']) {
      assert.ok(
        parts.some((p) => p.startsWith(`${table}_p`)),
        `${table} has this year's partitions`,
      );
    }
    // Those migrations made (0032) have the metadata's statistics (0035) as those made since.
    const { rows } = await sql<{ name: string; kv: string | null }>`
      select c.relname as name, s.stxname as kv from pg_inherits i join pg_class c on c.oid = i.inhrelid
        left join pg_statistic_ext s on s.stxrelid = c.oid
      where i.inhparent = 'log_metadata'::regclass`.execute(t.db.db);
    assert.ok(rows.length >= 3);
    for (const { name, kv } of rows) assert.equal(kv, `${name}_kv`);
  });

  it('stores a log of a month without a partition (late or far ahead) and lists it', async () => {
    const late = Date.UTC(2019, 2, 14, 12);
    const ahead = Date.UTC(2031, 6, 2, 8);
    const ids = await seed(t, a, [late, ahead], 'far-model');
    assert.deepEqual(await listed(t, a, late - DAY, late + DAY), [ids[0]]);
    assert.deepEqual(await listed(t, a, ahead - DAY, ahead + DAY), [ids[1]]);
    const months = (await logMonths(t.db.db)).map((m) => m.lo);
    assert.ok(months.includes(Date.UTC(2019, 2, 1)));
    assert.ok(months.includes(Date.UTC(2031, 6, 1)));
    const one = await api(t.baseUrl, 'GET', `/api/request-logs/${ids[1]}/`, { key: a.key });
    assert.equal(one.status, 200, one.text);
    assert.equal(one.body.metadata.tier, 'far-model');
    await assertRollupsMatch(t.db.db, a.org.id);
  });

  it('refuses a second log with a stored unique_id, whatever its month', async () => {
    const [stored] = await seed(t, a, [Date.now()], 'unique-model');
    const row = await t.db.db.selectFrom('logs').selectAll().where('unique_id', '=', stored).executeTakeFirstOrThrow();
    // Next month's partition is there already: the refusal is the unique_id's, not a missing month's.
    const copy: Partial<typeof row> = { ...row, timestamp: monthStart(Date.now(), 1) + DAY };
    delete copy.id;
    await assert.rejects(
      t.db.db
        .insertInto('logs')
        .values(copy as typeof row)
        .execute(),
      /unique/,
    );
    const again = await t.db.db.selectFrom('logs').select('id').where('unique_id', '=', stored).execute();
    assert.equal(again.length, 1);
  });

  it('deletes a log with its scores and metadata rows', async () => {
    const [gone] = await seed(t, a, [Date.now() - 3 * DAY], 'deleted-model');
    const evaluator = await api(t.baseUrl, 'POST', '/api/evaluators/', { key: a.key, body: { name: 'kept' } });
    assert.equal(evaluator.status, 201, evaluator.text);
    const score = await api(t.baseUrl, 'POST', `/api/logs/${gone}/scores/`, {
      key: a.key,
      body: { evaluator_id: evaluator.body.id, numerical_value: 3 },
    });
    assert.equal(score.status, 201, score.text);
    const { id } = await t.db.db
      .selectFrom('logs')
      .select('id')
      .where('unique_id', '=', gone)
      .executeTakeFirstOrThrow();
    assert.equal((await api(t.baseUrl, 'DELETE', `/api/request-logs/${gone}/`, { key: a.key })).status, 204);
    for (const table of ['scores', 'log_metadata'] as const) {
      const left = await t.db.db.selectFrom(table).select('log_id').where('log_id', '=', id).execute();
      assert.equal(left.length, 0, table);
    }
    const unique = await sql`select 1 from log_unique_ids where unique_id = ${gone}`.execute(t.db.db);
    assert.equal(unique.rows.length, 0);
  });

  it('plans a common metadata value as common in a month made on demand (statistics of keys and values together)', async () => {
    // Five keys of two values each, every value its key's own: taken as independent, key k0 (a fifth of
    // the rows) and value k0-a (a tenth) would keep a fiftieth of them, 200 of the 10,000; it is 1,000.
    const month = Date.UTC(2018, 4, 1);
    for (let batch = 0; batch < 4; batch++) {
      const logs = Array.from({ length: 500 }, (_, i) => ({
        model: 'stats-model',
        input: 'q',
        output: 'a',
        timestamp: iso(month + DAY + (batch * 500 + i) * 1000),
        metadata: Object.fromEntries(
          Array.from({ length: 5 }, (_, k) => [`k${k}`, `k${k}-${(batch * 500 + i) % 2 === 0 ? 'a' : 'b'}`]),
        ),
      }));
      const res = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', { key: a.key, body: logs });
      assert.equal(res.status, 201, res.text);
    }
    await t.flush();
    await sql`analyze log_metadata_p201805`.execute(t.db.db);
    const { rows } = await sql<{ 'QUERY PLAN': { Plan: { 'Plan Rows': number } }[] }>`explain (format json)
      select log_id from log_metadata where organization_id = ${a.org.id} and key = 'k0' and value_text = 'k0-a'
        and timestamp >= ${month} and timestamp < ${Date.UTC(2018, 5, 1)}`.execute(t.db.db);
    const estimate = rows[0]['QUERY PLAN'][0].Plan['Plan Rows'];
    assert.ok(estimate >= 700 && estimate <= 1300, `planned ${estimate} rows of 1,000`);
  });
});

describe('retention by whole months', { skip: testDialect !== 'postgres' && 'PostgreSQL only' }, () => {
  let t: TestApp;
  let a: Tenant;
  let shorter: Tenant;
  let forever: Tenant;
  const now = Date.now();
  // A month wholly past 30 days, and an older one an organization that keeps everything has a log in.
  const retiredMonth = monthStart(now, -3);
  const heldMonth = monthStart(now, -4);
  const suffix = (lo: number) => iso(lo).slice(0, 7).replace('-', '');

  before(async () => {
    t = await startApp({ env: { GATELOG_RETENTION_INTERVAL_S: '3600' } });
    [a, shorter, forever] = [await t.tenant(), await t.tenant(), await t.tenant()];
    for (const [who, days] of [
      [shorter, 10],
      [forever, 0],
    ] as const) {
      const set = await api(t.baseUrl, 'PATCH', '/api/settings/', { key: who.key, body: { retention_days: days } });
      assert.equal(set.status, 200, set.text);
    }
  });
  after(() => t.close());

  it('detaches a month past every retention whole, and deletes by rows what a shorter retention lets go', async () => {
    const inRetired = [retiredMonth + 3 * DAY, retiredMonth + 3 * DAY + 60_000, retiredMonth + 20 * DAY];
    const old = await seed(t, a, inRetired, 'old-model');
    const oldShorter = await seed(t, shorter, [retiredMonth + 5 * DAY], 'old-model');
    const heldA = await seed(t, a, [heldMonth + 2 * DAY], 'held-model');
    const heldForever = await seed(t, forever, [heldMonth + 2 * DAY], 'held-model');
    const recentA = await seed(t, a, [now - 20 * DAY], 'recent-model');
    const recentShorter = await seed(t, shorter, [now - 20 * DAY, now - 15 * DAY], 'recent-model');
    const freshShorter = await seed(t, shorter, [now - DAY], 'fresh-model');
    const evaluator = await api(t.baseUrl, 'POST', '/api/evaluators/', { key: a.key, body: { name: 'quality' } });
    const score = await api(t.baseUrl, 'POST', `/api/logs/${old[0]}/scores/`, {
      key: a.key,
      body: { evaluator_id: evaluator.body.id, numerical_value: 4 },
    });
    assert.equal(score.status, 201, score.text);
    await t.searchIndexer.catchUp();
    const oldIds = (
      await t.db.db
        .selectFrom('logs')
        .select('id')
        .where('unique_id', 'in', [...old, ...oldShorter])
        .execute()
    ).map((r) => Number(r.id));

    const sweep = new RetentionSweep(
      t.db,
      { retentionDays: 30, contentRetentionDays: 0, intervalMs: 3_600_000 },
      createLogger('silent'),
      null,
    );
    const report = await sweep.run();
    assert.ok(report, 'the sweep ran');
    assert.equal(report.error, null);
    assert.equal(report.complete, true);
    // The retired month's 4 logs and the 2 of the shorter retention (20 and 15 days), and A's held one.
    assert.equal(report.deleted_logs, 4 + 2 + 1);
    assert.deepEqual(report.months, [{ month: iso(retiredMonth).slice(0, 7), way: 'detached' }]);

    const months = (await logMonths(t.db.db)).map((m) => m.lo);
    assert.ok(!months.includes(retiredMonth), 'the expired month is detached');
    assert.ok(months.includes(heldMonth), 'a month a kept log is in stays');
    assert.deepEqual(await tables(t, `%_p${suffix(retiredMonth)}`), [], 'its partitions are all dropped');
    assert.deepEqual(await tables(t, 'logs_retired_%'), [], 'and walked');
    assert.equal((await tables(t, `%_p${suffix(heldMonth)}`)).length, 5);

    const everything = [now - 200 * DAY, now + DAY] as const;
    assert.deepEqual(await listed(t, a, ...everything), recentA);
    assert.deepEqual(await listed(t, shorter, ...everything), freshShorter);
    assert.deepEqual(await listed(t, forever, ...everything), heldForever);
    assert.ok(heldA.length === 1 && recentShorter.length === 2);
    for (const who of [a, shorter, forever]) {
      await assertRollupsMatch(t.db.db, who.org.id);
      await assertFacetsMatch(t, who);
    }
    assert.equal(await leftOf(t, oldIds, [...old, ...oldShorter]), 0, 'nothing of the retired logs is left');

    // A late log of the retired month comes back: its month is made again and it is stored.
    const [late] = await seed(t, forever, [retiredMonth + 4 * DAY], 'late-model');
    assert.deepEqual(await listed(t, forever, retiredMonth, retiredMonth + 10 * DAY), [late]);
  });
});
