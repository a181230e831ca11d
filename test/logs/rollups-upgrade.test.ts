/**
 * A database from before rollups: its logs stored at migration 0030, the rollups' migration notes them,
 * summaries read the logs until the background job has added them all, then the rollups — on the
 * database GATELOG_TEST_DB names.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createLogger } from '../../src/logger.js';
import { logFilterOptions } from '../../src/logs/list/filter-options.js';
import { RollupBackfill, rollupsComplete } from '../../src/logs/rollups/rollup-backfill.js';
import { parseSummaryBody } from '../../src/logs/summary/request.js';
import { summarizeLogs } from '../../src/logs/summary/summary.js';
import { buildNewLog } from '../../src/logs/write/new-log.js';
import { loadPriceTable } from '../../src/logs/pricing/price-table.js';
import { DEFAULT_LOG_MAX_BYTES } from '../../src/config.js';
import { createTestDatabase } from '../support/database.js';
import { poll } from '../support/poll.js';
import { assertRollupsMatch } from '../support/rollup-check.js';

const DAY = 86_400_000;

describe('rollups of a database from before them', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let handle: ReturnType<typeof connect>;
  const now = Date.now();
  const org = { id: 'org-upgrade', name: 'upgrade' };

  before(async () => {
    database = await createTestDatabase();
    handle = connect(database.target);
    await migrateToLatest(handle.db, '0030_session_indexes');
    await sql`insert into organizations (id, name, created_at) values (${org.id}, ${org.name}, ${now})`.execute(
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
    const prices = loadPriceTable(null);
    // As an earlier version stored them: the log rows alone (their facet counts do not matter here).
    const rows = Array.from(
      { length: 300 },
      (_, i) =>
        buildNewLog(
          {
            log_method: 'logging_api',
            model: ['gpt-4o', 'gpt-4o-mini'][i % 2],
            status_code: i % 6 === 0 ? 500 : 200,
            latency: 0.1 + (i % 23) * 0.2,
            time_to_first_token: i % 3 === 0 ? null : 0.05 * (1 + (i % 7)),
            cost: 0.002 * (i % 5),
            prompt_tokens: 10 + i,
            timestamp: Math.round(now - (i % 60) * 2.7 * 3_600_000),
            customer_identifier: `customer-${i % 7}`,
          } as never,
          auth,
          prices,
          DEFAULT_LOG_MAX_BYTES,
        ).row,
    );
    // An earlier version counted customers in the facet counts too; the upgrade leaves that to the rollups.
    for (const field of ['customer_identifier', 'model'])
      await handle.db
        .insertInto('log_facets')
        .values({
          organization_id: org.id,
          field,
          grain_ms: DAY,
          bucket_start: Math.floor(now / DAY) * DAY,
          is_test: 0,
          value_text: 'old',
          log_count: 5,
        })
        .execute();
    for (let i = 0; i < rows.length; i += 100)
      await handle.db
        .insertInto('logs')
        .values(rows.slice(i, i + 100))
        .execute();
  });
  after(async () => {
    await handle.close();
    await database.drop();
  });

  /** Each customer's logs over the week, as filter_options counts them. */
  const weekCustomers = async () => {
    const options = await logFilterOptions(handle.reader, {
      organizationId: org.id,
      start: now - 7 * DAY,
      end: now,
      isTest: null,
    });
    return Object.fromEntries(options.customer_identifier.value_choices.map((c) => [c.value, c.count]));
  };
  /** The same counted from the stored logs. */
  const storedCustomers = async () => {
    const rows = await handle.db
      .selectFrom('logs')
      .select(['customer_identifier', (eb) => eb.fn.countAll<number>().as('n')])
      .where('organization_id', '=', org.id)
      .groupBy('customer_identifier')
      .execute();
    return Object.fromEntries(rows.map((r) => [r.customer_identifier, Number(r.n)]));
  };

  const weekSummary = () =>
    summarizeLogs(
      handle.reader,
      handle.dialect,
      parseSummaryBody(org.id, {
        start_time: new Date(now - 7 * DAY).toISOString(),
        end_time: new Date(now).toISOString(),
        metrics: [{ agg: 'count' }, { field: 'latency', agg: 'p95' }],
        group_by: ['model'],
        // The rollups wherever they can answer (left to itself, gatelog reads these few logs).
        exact: false,
      }),
    );

  it('notes the stored logs, and summaries read the logs until they are added', async () => {
    // The later migrations come after it (on PostgreSQL the logs become partitioned: 0032).
    assert.equal((await migrateToLatest(handle.db))[0], '0031_log_rollups');
    assert.equal(await rollupsComplete(handle.db), false);
    const facetFields = await handle.db.selectFrom('log_facets').select('field').execute();
    assert.deepEqual(
      facetFields.map((r) => r.field),
      ['model'],
    );
    const before = await weekSummary();
    assert.equal(before.source, 'logs');
    assert.equal(before.totals.values[0], 300);
    // The customers' counts come from their rollups, which do not hold these logs yet: from the logs.
    const customers = await storedCustomers();
    assert.equal(Object.keys(customers).length, 7);
    assert.deepEqual(await weekCustomers(), customers);
  });

  it('adds them in the background, and then summaries read the rollups', async () => {
    const exact = await weekSummary();
    const job = new RollupBackfill(handle.bulk, createLogger('silent'), 40);
    job.start();
    assert.ok(await poll(() => rollupsComplete(handle.db), 20_000), 'the job adds every noted log');
    await job.stop();
    await assertRollupsMatch(handle.db, org.id);
    assert.deepEqual(await weekCustomers(), await storedCustomers());
    const after = await weekSummary();
    assert.equal(after.source, 'rollups');
    assert.equal(after.approximate, true);
    assert.deepEqual(
      after.totals.points.map((p) => p[0]),
      exact.totals.points.map((p) => p[0]),
    );
    after.totals.points.forEach((p, i) => {
      const want = exact.totals.points[i][1];
      if (want === null) assert.equal(p[1], null);
      else assert.ok(Math.abs(p[1]! - want) <= 0.01 * want, `bucket ${i}: ${p[1]} against ${want}`);
    });
  });
});
