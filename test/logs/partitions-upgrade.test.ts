/**
 * A database from before the monthly partitions (migration 0031) with logs of several months, their
 * metadata, scores, facet counts and rollups: after the upgrade every row and id is there as it was, the
 * id sequence goes on where it was, and writing, listing, deleting and retention work — on the database
 * GATELOG_TEST_DB names (on SQLite, where nothing is partitioned, the same holds trivially).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createApiKey } from '../../src/auth/api-keys.js';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createLogger } from '../../src/logger.js';
import { insertLogs } from '../../src/logs/repository.js';
import { rollupsComplete } from '../../src/logs/rollups/rollup-backfill.js';
import { LOG_ROLLUPS } from '../../src/logs/rollups/rollup-kinds.js';
import { buildNewLog } from '../../src/logs/write/new-log.js';
import { loadPriceTable } from '../../src/logs/pricing/price-table.js';
import { RetentionSweep } from '../../src/retention/sweep.js';
import { DEFAULT_LOG_MAX_BYTES } from '../../src/config.js';
import { createTestDatabase, testDialect } from '../support/database.js';
import { api, startApp, type TestApp } from '../support/harness.js';
import { poll } from '../support/poll.js';
import { assertRollupsMatch } from '../support/rollup-check.js';

const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

type Rows = Record<string, unknown>[];

describe('a database from before the monthly partitions', () => {
  let t: TestApp;
  const now = Date.now();
  const org = { id: 'org-partitions', name: 'partitions' };
  const before_: Record<string, Rows> = {};
  let lastId = 0;
  let scoredUniqueId = '';

  const snapshot = async (db: TestApp['db']['db']): Promise<Record<string, Rows>> => ({
    logs: (await sql<Record<string, unknown>>`select * from logs order by id`.execute(db)).rows,
    log_metadata: (await sql<Record<string, unknown>>`select * from log_metadata order by log_id, key`.execute(db))
      .rows,
    scores: (await sql<Record<string, unknown>>`select * from scores order by id`.execute(db)).rows,
    log_facets: (
      await sql<Record<string, unknown>>`select * from log_facets
        order by field, grain_ms, bucket_start, is_test, value_text`.execute(db)
    ).rows,
    log_rollups: (
      await sql<Record<string, unknown>>`select * from log_rollups
        order by grain_ms, bucket_start, model, status_code`.execute(db)
    ).rows,
  });

  before(async () => {
    const database = await createTestDatabase();
    const handle = connect(database.target);
    await migrateToLatest(handle.db, '0031_log_rollups');
    await sql`insert into organizations (id, name, created_at) values (${org.id}, ${org.name}, ${now})`.execute(
      handle.db,
    );
    await sql`insert into evaluators (id, organization_id, name, evaluator_slug, type, score_value_type, description,
      created_at, updated_at) values ('ev-1', ${org.id}, 'quality', 'quality', 'human', 'numerical', '', ${now}, ${now})`.execute(
      handle.db,
    );
    const auth = {
      organizationId: org.id,
      organizationName: org.name,
      keyId: 'key-1',
      keyName: 'production',
      isTest: false,
      owner: { email: '', first_name: '', last_name: '' },
    };
    // Logs of two years ago, of last months and of now, with metadata: as that version wrote them.
    const ages = [730, 729, 400, 95, 60, 33, 10, 1, 0];
    const logs = ages.map((age, i) =>
      buildNewLog(
        {
          log_method: 'logging_api',
          model: ['gpt-4o', 'gpt-4o-mini'][i % 2],
          status_code: i % 4 === 0 ? 500 : 200,
          latency: 0.2 + i * 0.1,
          cost: 0.001 * i,
          metadata: { tier: `tier-${i % 3}`, n: i },
          timestamp: now - age * DAY,
        } as never,
        auth,
        loadPriceTable(null),
        DEFAULT_LOG_MAX_BYTES,
      ),
    );
    // As that version wrote them: the rollups of 0031 alone (0034 adds the customers' and their job).
    await handle.db.transaction().execute((trx) => insertLogs(trx, logs, [LOG_ROLLUPS]));
    const stored = await sql<{ id: number; unique_id: string }>`select id, unique_id from logs order by id`.execute(
      handle.db,
    );
    scoredUniqueId = stored.rows[3].unique_id;
    for (const [k, row] of [stored.rows[0], stored.rows[3]].entries()) {
      await sql`insert into scores (id, organization_id, log_id, evaluator_id, numerical_value, boolean_value,
        score_value, created_at) values (${`score-${k}`}, ${org.id}, ${row.id}, 'ev-1', 4, null, 4, ${now})`.execute(
        handle.db,
      );
    }
    lastId = Number(stored.rows.at(-1)!.id);
    Object.assign(before_, await snapshot(handle.db));
    await handle.close();
    // The app upgrades it as it starts (its own sweep a minute off; the test runs one).
    t = await startApp({ database, env: { GATELOG_RETENTION_INTERVAL_S: '3600' } });
  });
  after(() => t.close());

  it('keeps every row and id', async () => {
    const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(t.db.db);
    assert.ok(applied.rows.some((r) => r.name === '0032_log_partitions'));
    assert.deepEqual(await snapshot(t.db.db), before_);
    assert.equal(before_.logs.length, 9);
    if (testDialect === 'postgres') {
      const kinds = await sql<{ relname: string; relkind: string }>`select relname, relkind from pg_class
        where relname in ('logs', 'log_metadata', 'log_facets', 'log_rollups', 'log_customer_rollups')
        order by relname`.execute(t.db.db);
      assert.deepEqual(
        kinds.rows.map((r) => r.relkind),
        ['p', 'p', 'p', 'p', 'p'],
      );
      const ids = await sql<{ n: number }>`select count(*)::int as n from log_unique_ids`.execute(t.db.db);
      assert.equal(ids.rows[0].n, 9);
    }
  });

  it('writes new logs after the last id, lists them all, and deletes one with its scores and metadata', async () => {
    const created = await createApiKey(t.db.db, { organizationId: org.id, name: 'after', isTest: false });
    const res = await api(t.baseUrl, 'POST', '/api/request-logs/create/', {
      key: created.key,
      body: { model: 'after-upgrade', metadata: { tier: 'new' } },
    });
    assert.equal(res.status, 201, res.text);
    const row = await t.db.db
      .selectFrom('logs')
      .select('id')
      .where('unique_id', '=', res.body.unique_id)
      .executeTakeFirstOrThrow();
    assert.equal(Number(row.id), lastId + 1, 'the id sequence goes on');
    const list = await api(
      t.baseUrl,
      'GET',
      `/api/request-logs/list/?start_time=${iso(now - 800 * DAY)}&end_time=${iso(now + DAY)}&page_size=100`,
      { key: created.key },
    );
    assert.equal(list.status, 200, list.text);
    assert.equal(list.body.results.length, 10);
    const gone = await api(t.baseUrl, 'DELETE', `/api/request-logs/${scoredUniqueId}/`, { key: created.key });
    assert.equal(gone.status, 204, gone.text);
    const id = Number(before_.logs[3].id);
    assert.equal((await t.db.db.selectFrom('scores').select('id').where('log_id', '=', id).execute()).length, 0);
    assert.equal((await t.db.db.selectFrom('log_metadata').select('key').where('log_id', '=', id).execute()).length, 0);
    // The customer rollups of the logs stored before 0034: added by the job the app started.
    assert.ok(await poll(() => rollupsComplete(t.db.db), 20_000), 'the job adds the stored logs');
    await assertRollupsMatch(t.db.db, org.id);
  });

  it('lets retention take the logs past it', async () => {
    const sweep = new RetentionSweep(
      t.db,
      { retentionDays: 365, contentRetentionDays: 0, intervalMs: 3_600_000 },
      createLogger('silent'),
      null,
    );
    const report = await sweep.run();
    assert.equal(report?.error, null);
    assert.equal(report?.deleted_logs, 3, 'the two of two years ago, and the one of 400 days');
    const left = await t.db.db.selectFrom('logs').select('id').execute();
    assert.equal(left.length, 10 - 1 - 3);
    const scores = await t.db.db.selectFrom('scores').select('id').execute();
    assert.equal(scores.length, 0, 'the two-year-old log took its score with it');
    await assertRollupsMatch(t.db.db, org.id);
  });
});
