/**
 * Migration 0037: on SQLite the index by organization and id also holds the columns a facet count reads
 * when a metadata value's logs lead (their ids looked up from the side table), so those logs are read
 * from the index, not from their wide rows; PostgreSQL's index is left as it is — on the database
 * GATELOG_TEST_DB names.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import SQLite from 'better-sqlite3';
import { createTestDatabase, testDialect } from '../support/database.js';
import { api, startAppWithTenant } from '../support/harness.js';

describe('the index of logs by organization and id', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let handle: ReturnType<typeof connect>;

  before(async () => {
    database = await createTestDatabase();
    handle = connect(database.target);
    await migrateToLatest(handle.db);
  });

  after(async () => {
    await handle.close();
    await database.drop();
  });

  const columns = async (): Promise<string[]> => {
    if (testDialect === 'sqlite') {
      const { rows } = await sql<{ name: string }>`select name from pragma_index_info('logs_org_id_idx')`.execute(
        handle.db,
      );
      return rows.map((r) => r.name);
    }
    const { rows } = await sql<{ indexdef: string }>`select indexdef from pg_indexes
      where tablename = 'logs' and indexname = 'logs_org_id_idx'`.execute(handle.db);
    assert.equal(rows.length, 1, 'the index is there');
    return rows[0].indexdef.replace(/^.*\((.*)\)$/, '$1').split(', ');
  };

  const BY_ID = ['organization_id', 'id'];
  const WIDENED = [...BY_ID, 'is_test', 'timestamp', 'status_code', 'model'];

  it('holds the columns a count led by a metadata value reads (SQLite), only the id (PostgreSQL)', async () => {
    assert.deepEqual(await columns(), testDialect === 'sqlite' ? WIDENED : BY_ID);
  });

  // PostgreSQL's facet counts join the side table another way: no plan of theirs rests on this index.
  if (testDialect === 'sqlite')
    it('answers the models of a metadata value’s logs from the index, not the log rows (SQLite)', async () => {
      // A store the app wrote (logs over 20 models, a quarter of them in each region), with the
      // statistics gatelog keeps: the planner's choice rests on them.
      const [t, a] = await startAppWithTenant();
      try {
        const now = Date.now();
        for (let batch = 0; batch < 4; batch++) {
          const logs = Array.from({ length: 500 }, (_, i) => ({
            model: `model-${(batch * 500 + i) % 20}`,
            status_code: i % 20 === 0 ? 500 : 200,
            metadata: { region: ['eu-west', 'us-east', 'us-west', 'ap-south'][i % 4], plan: 'pro' },
            timestamp: new Date(now - (batch * 500 + i) * 60_000).toISOString(),
          }));
          const created = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', { key: a.key, body: { logs } });
          assert.equal(created.status, 201, created.text);
        }
        await t.flush();
        const file = new SQLite(t.database.url);
        try {
          file.exec('analyze');
          // The form facet-counts.ts gives a count whose metadata set leads: the set's ids looked up in logs.
          const plan = file
            .prepare(
              `explain query plan select model, count(*) from logs
                where organization_id = ? and timestamp >= ? and timestamp <= ? and is_test = 0 and status_code = 200
                  and id in (select m.log_id from log_metadata as m where m.organization_id = ? and m.key = 'region'
                    and m.timestamp >= ? and m.timestamp <= ? and m.value_text = 'eu-west')
                group by model`,
            )
            .all(a.org.id, now - 7 * 86_400_000, now, a.org.id, now - 7 * 86_400_000, now) as { detail: string }[];
          const logsStep = plan.map((r) => r.detail).find((d) => /^SEARCH logs\b/.test(d));
          assert.match(
            logsStep ?? '',
            /USING COVERING INDEX logs_org_id_idx \(organization_id=\? AND id=\?/,
            JSON.stringify(plan),
          );
        } finally {
          file.close();
        }
      } finally {
        await t.close();
      }
    });

  it('goes back to the organization and id alone when migrated down', async () => {
    await migrateToLatest(handle.db, '0036_customer_facets_from_rollups');
    assert.deepEqual(await columns(), BY_ID);
    await migrateToLatest(handle.db);
    assert.deepEqual(await columns(), testDialect === 'sqlite' ? WIDENED : BY_ID);
  });

  // Before migrations ran in a transaction on SQLite, a start stopped after the old index was dropped
  // (its build takes minutes on a large store) left it so: the migration, run again, finds nothing to drop.
  if (testDialect === 'sqlite')
    it('finishes on the next start when a start was stopped between the drop and the build', async () => {
      await migrateToLatest(handle.db, '0036_customer_facets_from_rollups');
      await sql`drop index logs_org_id_idx`.execute(handle.db);
      await migrateToLatest(handle.db);
      assert.deepEqual(await columns(), WIDENED);
    });
});
