/**
 * GATELOG_DATABASE_READ_URL (docs/scaling.md "Read replicas"): on PostgreSQL the lists read from the
 * replica, everything else from the primary. The replica here is a second database, not a streaming
 * copy, so each read's answer says which one it went to: the primary holds the logs written through
 * gatelog, the stand-in other logs of the same tenant.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import { testDialect } from '../support/database.js';
import { runGatelog } from '../support/cli.js';
import { api, servedEnv, startApp, type Tenant, type TestApp } from '../support/harness.js';
import { anHourAgo, listedIdentifiers, writeLogBatch } from '../support/logs-api.js';
import { createStandInReplica, type StandInReplica } from '../support/read-replica.js';

/** Logs of `organizationId` written straight into `db` (not through gatelog), one per identifier. */
async function insertLogs(db: Kysely<Database>, organizationId: string, identifiers: string[]): Promise<void> {
  const now = Date.now() - 60_000;
  for (const [i, identifier] of identifiers.entries()) {
    await sql`insert into logs (organization_id, environment, log_type, log_method, model, status_code, status,
      failed, latency, timestamp, start_time, created_at, unique_id, custom_identifier)
      values (${organizationId}, 'prod', 'chat', 'logging_api', 'replica-model', 200, 'success', 0, 1,
      ${now + i}, ${now + i}, ${now + i}, ${`replica-${identifier}`}, ${identifier})`.execute(db);
  }
}

const identifiersIn = async (db: Kysely<Database>): Promise<string[]> =>
  (await db.selectFrom('logs').select('custom_identifier').orderBy('custom_identifier').execute()).map(
    (r) => r.custom_identifier as string,
  );

describe('a read replica', { skip: testDialect !== 'postgres' && 'PostgreSQL only' }, () => {
  let replica: StandInReplica;
  let t: TestApp;
  let tenant: Tenant;
  const call = (method: string, path: string, body?: unknown) =>
    api(t.baseUrl, method, path, { key: tenant.key, body });

  before(async () => {
    replica = await createStandInReplica();
    t = await startApp({ env: { GATELOG_DATABASE_READ_URL: replica.database.url } });
    tenant = await t.tenant();
    await replica.copyTenant(t.db, tenant);
    await writeLogBatch(t, tenant, [
      { model: 'primary-model', custom_identifier: 'on-primary-1' },
      { model: 'primary-model', custom_identifier: 'on-primary-2' },
    ]);
    await insertLogs(replica.handle.db, tenant.org.id, ['on-replica-1', 'on-replica-2', 'on-replica-3']);
  });
  after(async () => {
    await t?.close();
    await replica?.close();
  });

  it('takes the writes on the primary', async () => {
    assert.deepEqual(await identifiersIn(t.db.db), ['on-primary-1', 'on-primary-2']);
    assert.deepEqual(await identifiersIn(replica.handle.db), ['on-replica-1', 'on-replica-2', 'on-replica-3']);
    assert.equal(t.db.readReplica?.url, replica.database.url);
  });

  it('serves lists and summaries from the replica', async () => {
    assert.deepEqual((await listedIdentifiers(t, tenant, 'page_size=50')).sort(), [
      'on-replica-1',
      'on-replica-2',
      'on-replica-3',
    ]);
    const summary = await call('POST', '/api/request-logs/summary/', {
      start_time: anHourAgo(),
      end_time: new Date(Date.now() + 60_000).toISOString(),
      exact: true,
    });
    assert.equal(summary.status, 200, summary.text);
    assert.deepEqual(summary.body.totals.values, [3], summary.text);
  });

  it('reads a log just created by its id from the primary', async () => {
    const created = await call('POST', '/api/request-logs/create/', {
      model: 'primary-model',
      custom_identifier: 'new',
    });
    assert.equal(created.status, 201, created.text);
    const fetched = await call('GET', `/api/request-logs/${created.body.unique_id}/`);
    assert.equal(fetched.status, 200, fetched.text);
    assert.equal(fetched.body.custom_identifier, 'new');
  });

  it("lists a dataset's logs from the primary, as the user just put them there", async () => {
    const dataset = await call('POST', '/api/datasets/', { name: 'fresh', start_time: anHourAgo() });
    assert.equal(dataset.status, 201, dataset.text);
    assert.ok(dataset.body.log_count >= 2, dataset.text);
    const list = await call('GET', `/api/datasets/${dataset.body.id}/logs/list/?page_size=50`);
    assert.equal(list.status, 200, list.text);
    assert.equal(list.body.count, dataset.body.log_count);
    assert.equal(list.body.results.length, dataset.body.log_count);
    assert.ok(
      list.body.results.every((r: { model: string }) => r.model === 'primary-model'),
      list.text,
    );
  });

  it('stops start-up in one line naming GATELOG_DATABASE_READ_URL when the replica cannot be reached, not the CLI', async () => {
    const env = servedEnv(t.database, { GATELOG_DATABASE_READ_URL: 'postgres://gl:pw@127.0.0.1:1/gatelog' });
    // The CLI's commands work on the primary alone.
    const listed = await runGatelog(['orgs', 'list', '--json'], env);
    assert.equal(listed.code, 0, listed.stderr);
    assert.doesNotMatch(listed.stderr, /replica/);
    const res = await runGatelog(['serve'], env);
    assert.equal(res.code, 1, res.stderr);
    assert.match(
      res.stderr,
      /^gatelog: GATELOG_DATABASE_READ_URL: cannot use PostgreSQL postgres:\/\/gl:\*\*\*@127\.0\.0\.1:1\/gatelog: .*ECONNREFUSED.*\n$/,
    );
  });

  // Last: it takes the replica away.
  it('says on /health whether the replica answers, staying 200 without it', async () => {
    const up = await api(t.baseUrl, 'GET', '/health');
    assert.equal(up.status, 200, up.text);
    assert.equal(up.body.read_replica, 'ok');
    await replica.goDown();
    const down = await api(t.baseUrl, 'GET', '/health');
    assert.equal(down.status, 200, down.text);
    assert.equal(down.body.read_replica, 'unreachable');
    const list = await call('GET', `/api/request-logs/list/?start_time=${anHourAgo()}`);
    assert.equal(list.status, 503, list.text);
    const created = await call('POST', '/api/request-logs/create/', { model: 'primary-model' });
    assert.equal(created.status, 201, 'writes go on without the replica');
  });
});
