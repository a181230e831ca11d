/**
 * Request-log list benchmark (issue: listing and the filter language). Seeds 1,000,000 logs over
 * 7 days for one organization (kept between runs), then times a fixed mix of list calls over real
 * HTTP, 20 times each, over the last hour and over all 7 days, plus fetch_filters=true.
 *
 *   npm run bench -- list [--db sqlite|postgres] [--rows 1000000] [--runs 20]
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { createApiKey } from '../src/auth/api-keys.js';
import type { AuthContext } from '../src/auth/authenticator.js';
import { createOrganization } from '../src/auth/organizations.js';
import type { Database } from '../src/db/schema.js';
import { loadConfig } from '../src/config.js';
import { connect } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { loadPriceTable } from '../src/gateway/pricing.js';
import { createLogger } from '../src/logger.js';
import { inserterFor } from '../src/logs/write/inserter.js';
import { LogWriter } from '../src/logs/write/writer.js';
import { createUpstreamClient } from '../src/gateway/loop-guard.js';
import { seedLogs } from './seed-logs.js';

const BENCH_DIR = path.resolve(process.env.GATELOG_BENCH_DIR ?? '/tmp/gatelog-bench');
const PG_MAINTENANCE = process.env.GATELOG_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

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

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

export async function runListBench(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      db: { type: 'string', default: 'sqlite' },
      rows: { type: 'string', default: '1000000' },
      runs: { type: 'string', default: '20' },
    },
  });
  const rows = Number(values.rows);
  const runs = Number(values.runs);
  fs.mkdirSync(BENCH_DIR, { recursive: true });
  const tag = `list_${rows}`;
  const databaseUrl =
    values.db === 'postgres' ? await ensurePostgresDatabase(`gatelog_bench_${tag}`) : path.join(BENCH_DIR, `${tag}.db`);
  const stateFile = path.join(BENCH_DIR, `${tag}.${values.db}.json`);
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
    console.log(`reusing the seeded ${values.db} data set (${rows} logs)`);
    if (applied.length > 0) {
      console.log(`applied ${applied.join(', ')}; refreshing planner statistics`);
      await settle(handle.db, values.db);
    }
  } else {
    const org = await createOrganization(handle.db, `bench-${crypto.randomUUID()}`);
    const key = await createApiKey(handle.db, { organizationId: org.id, name: 'bench', isTest: false });
    const testKey = await createApiKey(handle.db, { organizationId: org.id, name: 'bench-test', isTest: true });
    const auth = (k: typeof key): AuthContext => ({
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
    await settle(handle.db, values.db);
    state = { key: key.key, now, evaluatorIds };
    fs.writeFileSync(stateFile, JSON.stringify(state));
  }

  const logger = createLogger('silent');
  const writer = new LogWriter(inserterFor(handle), logger);
  const upstream = createUpstreamClient(config, config.secretKey!);
  const app = await buildApp({
    config,
    db: handle,
    secretKey: config.secretKey!,
    logger,
    prices: loadPriceTable(null),
    writer,
    upstream,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

  const end = new Date(state.now).toISOString();
  const ranges = {
    'last hour': new Date(state.now - 3600_000).toISOString(),
    '7 days': new Date(state.now - 7 * 24 * 3600_000).toISOString(),
  };
  const mix: [string, string, unknown?][] = [
    ['default page', ''],
    ['sort by -cost', '&sort_by=-cost'],
    ['model equals', '&model=model-7'],
    [
      'customer_identifier icontains',
      '',
      { filters: { customer_identifier: { operator: 'icontains', value: ['TOMER-12'] } } },
    ],
    ['cost gt', '', { filters: { cost: { operator: 'gt', value: [0.09] } } }],
    ['metadata__plan equals', '&metadata__plan=enterprise'],
    ['status_code not', '&status_code[value]=200&status_code[operator]=not'],
    [
      'three filters combined',
      '&model=model-4',
      { filters: { status_code: { value: [200] }, metadata__region: { value: ['eu-west'] } } },
    ],
    ['fetch_filters=true', '&fetch_filters=true'],
  ];
  const results: string[] = [];
  results.push(`| query | range | p50 ms | p95 ms | count |`, `|---|---|---:|---:|---:|`);
  for (const [name, query, body] of mix) {
    for (const [rangeName, start] of Object.entries(ranges)) {
      const url = `${base}/api/request-logs/list/?start_time=${start}&end_time=${end}${query}`;
      const times: number[] = [];
      let count = 0;
      for (let i = 0; i < runs + 1; i++) {
        const t0 = performance.now();
        const res = await fetch(url, {
          method: body ? 'POST' : 'GET',
          headers: { authorization: `Bearer ${state.key}`, 'content-type': 'application/json' },
          body: body ? JSON.stringify(body) : undefined,
        });
        const json = (await res.json()) as { count: number };
        if (res.status !== 200) throw new Error(`${name}: ${res.status} ${JSON.stringify(json)}`);
        if (i > 0) times.push(performance.now() - t0); // the first call warms caches
        count = json.count;
      }
      times.sort((a, b) => a - b);
      const line = `| ${name} | ${rangeName} | ${percentile(times, 50).toFixed(1)} | ${percentile(times, 95).toFixed(1)} | ${count} |`;
      results.push(line);
      console.log(line);
    }
  }
  console.log(`\n${values.db}, ${rows} logs, ${runs} runs each:\n${results.join('\n')}`);
  await app.close();
  await writer.close();
  await handle.close();
}
