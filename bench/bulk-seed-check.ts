/**
 * Checks the bulk seed (bulk-seed.ts) against the repository's (seedLogs): the same logs seeded both
 * ways into two fresh stores must leave the same rows in logs, log_metadata, scores, log_facets,
 * log_rollups and log_customer_rollups — all but what is drawn or timed on each write (a log's
 * unique_id and created_at, a score's id). The repository path pairs a chunk's score draws with its scored logs in the order a
 * select by unique_id returns them (random within a millisecond), so scores are compared as the
 * scored logs and, apart, the drawn values. A rollup's sketch is compared as its bins (not their JSON
 * order, which follows the order of the upserts), its sums to 9 significant digits.
 *   node dist/bench/bulk-seed-check.js [--db sqlite|postgres] [--rows 30000] [--days 30]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import pg from 'pg';
import type { KeyIdentity } from '../src/auth/authenticator.js';
import type { DatabaseTarget } from '../src/config.js';
import { connect, type DbHandle } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { bulkSeedLogs, createSeedMonths } from './bulk-seed.js';
import { insertSeedEvaluators, seedLogs } from './seed-logs.js';

const PG_MAINTENANCE = process.env.GATELOG_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** Per table, the columns left out of the comparison (drawn at random on each write). */
const TABLES: Record<string, string[]> = {
  logs: ['unique_id', 'created_at'],
  log_metadata: [],
  scores: ['id', 'evaluator_id', 'numerical_value', 'score_value'],
  'scores drawn': ['id', 'log_id'],
  log_facets: [],
  log_rollups: [],
  log_customer_rollups: [],
};

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    rows: { type: 'string', default: '30000' },
    days: { type: 'string', default: '30' },
  },
});
const rows = Number(values.rows);
const days = Number(values.days);
const now = Date.now();
const org = { id: 'check-org', name: 'check', created_at: 0 };
const identity = (keyId: string, isTest: boolean): KeyIdentity => ({
  organizationId: org.id,
  organizationName: org.name,
  keyId,
  keyName: keyId,
  isTest,
  owner: { email: '', first_name: '', last_name: '' },
});
const evaluatorIds = ['check-e0', 'check-e1'];

/** A fresh store (a temporary file, or a database of its own), migrated, with the organization and evaluators. */
async function freshStore(name: string): Promise<{ handle: DbHandle; url: string; drop: () => Promise<void> }> {
  let url: string;
  let drop: () => Promise<void>;
  if (values.db === 'postgres') {
    const database = `list_bench_check_${name}_${process.pid}`;
    const admin = new pg.Client({ connectionString: PG_MAINTENANCE });
    await admin.connect();
    await admin.query(`create database ${database}`);
    await admin.end();
    const u = new URL(PG_MAINTENANCE);
    u.pathname = `/${database}`;
    url = u.toString();
    drop = async () => {
      const again = new pg.Client({ connectionString: PG_MAINTENANCE });
      await again.connect();
      await again.query(`drop database ${database}`);
      await again.end();
    };
  } else {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bulk-seed-check-'));
    url = path.join(dir, `${name}.db`);
    drop = async () => fs.rmSync(dir, { recursive: true, force: true });
  }
  const target: DatabaseTarget =
    values.db === 'postgres' ? { kind: 'postgres', url } : { kind: 'sqlite', path: url, isDefault: false };
  const handle = connect(target);
  await migrateToLatest(handle.db);
  await handle.db.insertInto('organizations').values(org).execute();
  await insertSeedEvaluators(handle.db, org.id, evaluatorIds);
  return { handle, url, drop };
}

/** A table's rows (but the left-out columns), sorted, as JSON lines. */
async function tableRows(handle: DbHandle, table: string): Promise<string[]> {
  const name = table.split(' ')[0];
  const { rows: all } = await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(handle.db);
  const value = (column: string, v: unknown) => {
    if (column.endsWith('_bins') && typeof v === 'string') return Object.entries(JSON.parse(v)).sort();
    if (typeof v === 'number' && !Number.isInteger(v)) return Number(v.toPrecision(9));
    return typeof v === 'bigint' ? Number(v) : v;
  };
  return all
    .map((row) => {
      for (const column of TABLES[table]) delete row[column];
      return JSON.stringify(Object.entries(row).map(([k, v]) => [k, value(k, v)]));
    })
    .sort();
}

const repository = await freshStore('repository');
const bulk = await freshStore('bulk');
try {
  const auth = identity('check-key', false);
  const testAuth = identity('check-test-key', true);
  await createSeedMonths(repository.handle, now, days);
  await seedLogs(repository.handle.db, auth, testAuth, evaluatorIds, rows, now, () => {}, days);
  await bulkSeedLogs(bulk.handle, auth, testAuth, evaluatorIds, rows, now, days, bulk.url, () => {});
  let failed = false;
  for (const table of Object.keys(TABLES)) {
    const [a, b] = [await tableRows(repository.handle, table), await tableRows(bulk.handle, table)];
    const differing = a.filter((row, i) => row !== b[i]).length + Math.abs(a.length - b.length);
    console.log(`${table}: ${a.length} rows by the repository, ${b.length} by the bulk seed, ${differing} differ`);
    if (differing > 0) {
      failed = true;
      const i = a.findIndex((row, k) => row !== b[k]);
      console.log(`  first difference:\n  ${a[i]}\n  ${b[i]}`);
    }
  }
  process.exitCode = failed ? 1 : 0;
} finally {
  await repository.handle.close();
  await bulk.handle.close();
  await repository.drop();
  await bulk.drop();
}
