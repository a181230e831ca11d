/** The seeded 1M-log store of the list and dataset benchmarks. */
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
import { SESSION_STRETCH, seedLogs } from './seed-logs.js';
import { SearchIndexer } from '../src/logs/search/indexer.js';

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
}

async function ensurePostgresDatabase(name: string): Promise<string> {
  const client = new pg.Client({ connectionString: PG_MAINTENANCE });
  await client.connect();
  const exists = await client.query('select 1 from pg_database where datname = $1', [name]);
  if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(PG_MAINTENANCE);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * Planner statistics, and on PostgreSQL a vacuum: a table that was just filled has no visibility map,
 * so index-only scans would still read every row until autovacuum (which runs on insert-only tables
 * too) got to it. A running gatelog is in that settled state.
 */
async function settle(db: Kysely<Database>, dialect: string): Promise<void> {
  await sql.raw(dialect === 'postgres' ? 'vacuum analyze' : 'analyze').execute(db);
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
 * The seeded store the list and dataset benchmarks share: `rows` logs over 7 days for one
 * organization, seeded once into GATELOG_BENCH_DIR (or a PostgreSQL database) and reused, served by
 * gatelog on a loopback port.
 */
export async function openBenchStore(db: BenchDb, rows: number) {
  fs.mkdirSync(BENCH_DIR, { recursive: true });
  const tag = `list_${rows}`;
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
    for (const [i, id] of evaluatorIds.entries()) {
      await handle.db
        .insertInto('evaluators')
        .values({
          id,
          organization_id: org.id,
          name: `e${i}`,
          evaluator_slug: `e${i}`,
          type: 'human',
          score_value_type: 'numerical',
          description: '',
          created_at: 0,
          updated_at: 0,
        })
        .execute();
    }
    const now = Date.now();
    const started = Date.now();
    await seedLogs(handle.db, auth(key), auth(testKey), evaluatorIds, rows, now, (done) => {
      if (done % 100_000 === 0) console.log(`seeded ${done} logs (${((Date.now() - started) / 1000).toFixed(0)} s)`);
    });
    await settle(handle.db, db);
    state = { key: key.key, now, evaluatorIds };
    fs.writeFileSync(stateFile, JSON.stringify(state));
  }

  // The search index as a server that has been running has it: caught up (the first run after seeding,
  // or after the migration that adds it, fills it here).
  const indexing = performance.now();
  // No writer waits on it here: large transactions.
  const indexer = new SearchIndexer(handle, null, null, { batchSize: 5000, batchTextChars: 16 * 1024 * 1024 });
  const before = indexer.indexed;
  await indexer.catchUp();
  if (indexer.indexed > before) {
    const seconds = (performance.now() - indexing) / 1000;
    console.log(`search index filled: ${indexer.indexed} logs in ${seconds.toFixed(0)} s`);
    await settle(handle.db, db);
  }

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
