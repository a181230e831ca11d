/** The seeded log stores of the list and dataset benchmarks: 1M logs over 7 days, or a large one (10M over 30). */
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { createApiKey } from '../src/auth/api-keys.js';
import type { KeyIdentity } from '../src/auth/authenticator.js';
import { createOrganization } from '../src/auth/organizations.js';
import type { Database } from '../src/db/schema.js';
import { loadConfig } from '../src/config.js';
import { connect } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createServices } from '../src/services.js';
import { insertSeedEvaluators, SEED_DAYS, SESSION_STRETCH, seedLogs } from './seed-logs.js';
import { bulkSeedLogs } from './bulk-seed.js';
import { printStoreSize } from './store-size.js';
import { backfillStep, rollupsComplete } from '../src/logs/rollups/rollup-backfill.js';
import { fillSearchIndex, searchBacklog } from './search-fill.js';

const BENCH_DIR = path.resolve(process.env.GATELOG_BENCH_DIR ?? '/tmp/gatelog-bench');
// A work tree with its own migrations keeps its own store: GATELOG_BENCH_DIR for SQLite and
// GATELOG_BENCH_PG_PREFIX for the PostgreSQL database's name.
const PG_PREFIX = process.env.GATELOG_BENCH_PG_PREFIX ?? 'gatelog_bench';
const PG_MAINTENANCE =
  process.env.GATELOG_BENCH_PG_URL ?? process.env.GATELOG_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

interface State {
  key: string;
  now: number;
  evaluatorIds: string[];
  /** Seconds the store took to build: its logs, then its search index (absent: seeded before this was kept). */
  build?: { seedSeconds: number; indexSeconds?: number };
}

export interface BenchStoreOptions {
  /** The days the logs span before `now` (default 7, the 1M store's). */
  days?: number;
  /**
   * Seed in large batches (bulk-seed.ts) rather than through the repository (seed-logs.ts). Default: for
   * any store but the 1M-log 7-day one, whose seed stays the one its recorded figures were measured on.
   */
  bulk?: boolean;
  /**
   * Serve without catching the search index up (a large store's index takes long to fill): the logs it
   * has not reached are searched directly, so search rows are not comparable. Default false.
   */
  skipIndex?: boolean;
}

/** Runs `work` on a connection to the maintenance database (creating and dropping the stores' own). */
async function onMaintenance(work: (client: pg.Client) => Promise<void>): Promise<void> {
  const client = new pg.Client({ connectionString: PG_MAINTENANCE });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}

async function ensurePostgresDatabase(name: string): Promise<string> {
  await onMaintenance(async (client) => {
    const exists = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${name}`);
  });
  const url = new URL(PG_MAINTENANCE);
  url.pathname = `/${name}`;
  return url.toString();
}

/** The store's name. The 7-day stores keep theirs (and the stores already seeded under them). */
const storeTag = (rows: number, days: number) => (days === SEED_DAYS ? `list_${rows}` : `list_${rows}_${days}d`);

/** Deletes a PostgreSQL store (a bench that emptied it): the next `openBenchStore` seeds it again. */
export async function forgetPostgresStore(rows: number, days: number): Promise<void> {
  const tag = storeTag(rows, days);
  fs.rmSync(path.join(BENCH_DIR, `${tag}.postgres.json`), { force: true });
  await onMaintenance(async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${PG_PREFIX}_${tag}`);
  });
}

/**
 * Planner statistics, and on PostgreSQL a vacuum: a table that was just filled has no visibility map,
 * so index-only scans would still read every row until autovacuum (which runs on insert-only tables
 * too) got to it. A running gatelog is in that settled state.
 */
async function settle(db: Kysely<Database>, dialect: string): Promise<void> {
  if (dialect !== 'postgres') {
    await sql`analyze`.execute(db);
    return;
  }
  // A large store's vacuum takes minutes: past the main pool's statement_timeout (db/connect.ts).
  await db.connection().execute(async (conn) => {
    await sql`set statement_timeout = 0`.execute(conn);
    await sql`vacuum analyze`.execute(conn);
  });
}

/**
 * A store seeded before the seed held sessions gets them: the sessions seedLogs gives its i-th log, by
 * the log's id (the seed's logs were stored in order from id 1). Once; false when it had them.
 */
async function addSessions(db: Kysely<Database>): Promise<boolean> {
  const any = await db.selectFrom('logs').select('id').where('thread_identifier', 'is not', null).limit(1).execute();
  if (any.length > 0) return false;
  await sql`update logs set thread_identifier = 'session-' || ((id - 1) / ${sql.lit(SESSION_STRETCH)})
    where (id - 1) % 10 < 6`.execute(db);
  return true;
}

export const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

export type BenchDb = 'sqlite' | 'postgres';

/**
 * The rollups of logs a migration noted (rollup_backfill), added before the store serves: a running
 * gatelog's background job would have done it, and until then every summary reads the logs.
 */
async function completeRollups(db: Kysely<Database>): Promise<void> {
  if (await rollupsComplete(db)) return;
  const started = performance.now();
  while (await backfillStep(db, 20_000));
  console.log(`rollups of the older logs added in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

/**
 * The seeded store the list and dataset benchmarks share: `rows` logs over 7 days (or `days`) for one
 * organization, seeded once into GATELOG_BENCH_DIR (or a PostgreSQL database) and reused, served by
 * gatelog on a loopback port.
 */
export async function openBenchStore(db: BenchDb, rows: number, options: BenchStoreOptions = {}) {
  fs.mkdirSync(BENCH_DIR, { recursive: true });
  const days = options.days ?? SEED_DAYS;
  const bulk = options.bulk ?? (rows > 1_000_000 || days !== SEED_DAYS);
  const tag = storeTag(rows, days);
  const databaseUrl =
    db === 'postgres' ? await ensurePostgresDatabase(`${PG_PREFIX}_${tag}`) : path.join(BENCH_DIR, `${tag}.db`);
  const stateFile = path.join(BENCH_DIR, `${tag}.${db}.json`);
  const config = loadConfig({
    GATELOG_DATABASE_URL: databaseUrl,
    GATELOG_SECRET_KEY: crypto.createHash('sha256').update('bench').digest('hex'),
    GATELOG_LOG_LEVEL: 'silent',
  });
  const handle = connect(config.database, { queryTimeoutMs: config.queryTimeoutMs });
  const applied = await migrateToLatest(handle.db);

  let state: State;
  if (fs.existsSync(stateFile)) {
    state = JSON.parse(fs.readFileSync(stateFile, 'utf8'));
    console.log(`reusing the seeded ${db} data set (${rows} logs)`);
    const sessions = await addSessions(handle.db);
    if (sessions) console.log('gave the seeded logs their sessions (thread_identifier)');
    if (applied.length > 0 || sessions) {
      console.log(`applied ${applied.join(', ') || 'no migration'}; refreshing planner statistics`);
      await settle(handle.db, db);
    }
    await completeRollups(handle.db);
  } else {
    const org = await createOrganization(handle.db, `bench-${crypto.randomUUID()}`);
    const key = await createApiKey(handle.db, { organizationId: org.id, name: 'bench', isTest: false });
    const testKey = await createApiKey(handle.db, { organizationId: org.id, name: 'bench-test', isTest: true });
    const auth = (k: typeof key): KeyIdentity => ({
      organizationId: org.id,
      organizationName: org.name,
      keyId: k.id,
      keyName: k.name,
      isTest: k.is_test,
      owner: { email: '', first_name: '', last_name: '' },
    });
    const evaluatorIds = [crypto.randomUUID(), crypto.randomUUID()];
    await insertSeedEvaluators(handle.db, org.id, evaluatorIds);
    const now = Date.now();
    const started = Date.now();
    // This process's CPU time beside the wall time: on a shared machine the wall time follows its load.
    const cpuStarted = process.cpuUsage();
    const progress = (done: number) => {
      if (done % (bulk ? 500_000 : 100_000) === 0 || done === rows) {
        const seconds = (Date.now() - started) / 1000;
        const cpu = process.cpuUsage(cpuStarted);
        console.log(
          `seeded ${done} logs (${seconds.toFixed(0)} s, ${(done / seconds).toFixed(0)} logs/s;` +
            ` CPU of this process ${((cpu.user + cpu.system) / 1e6).toFixed(0)} s)`,
        );
      }
    };
    if (bulk) {
      console.log(`seeding ${rows} logs over ${days} days in large batches (bulk-seed.ts)`);
      await bulkSeedLogs(handle, auth(key), auth(testKey), evaluatorIds, rows, now, days, databaseUrl, progress);
    } else {
      await seedLogs(handle.db, auth(key), auth(testKey), evaluatorIds, rows, now, progress, days);
    }
    const settling = performance.now();
    await settle(handle.db, db);
    console.log(
      `planner statistics${db === 'postgres' ? ' and vacuum' : ''}: ${((performance.now() - settling) / 1000).toFixed(0)} s`,
    );
    state = { key: key.key, now, evaluatorIds, build: { seedSeconds: (Date.now() - started) / 1000 } };
    fs.writeFileSync(stateFile, JSON.stringify(state));
  }

  // The search index as a server that has been running has it: caught up (the first run after seeding,
  // or after the migration that adds it, fills it here).
  const indexing = performance.now();
  let indexed = 0;
  if (options.skipIndex) {
    const left = await searchBacklog(handle.db);
    console.log(`search index not caught up (--skip-index): ${left} logs not indexed, searched directly`);
  } else indexed = await fillSearchIndex(handle);
  if (indexed > 0) {
    const seconds = (performance.now() - indexing) / 1000;
    console.log(`search index filled: ${indexed} logs in ${seconds.toFixed(0)} s`);
    await settle(handle.db, db);
    if (state.build && state.build.indexSeconds === undefined) {
      state.build.indexSeconds = seconds;
      fs.writeFileSync(stateFile, JSON.stringify(state));
    }
  }
  await printStoreSize(handle, rows, state.build);

  await handle.close();

  // The indexer is not started: the one above caught it up, and nothing writes meanwhile.
  const services = await createServices(config, { indexInBackground: false });
  const app = await buildApp(services);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

  const close = async () => {
    await app.close();
    await services.close();
  };
  return { state, base, handle: services.db, close };
}
