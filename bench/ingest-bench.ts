/**
 * The logging API's ingestion, per database: the rate at which two clients pushing 1,000-log batches
 * get them stored, the floor for it (the same rows inserted straight into the database by the writer's
 * inserter, no HTTP), and the latency of `create` at 1,000 calls/s.
 *
 *   npm run bench -- ingest [--db sqlite|postgres] [--seconds 10]
 *
 * Uses only the APIs older builds share, so the same file measures a build before a change too.
 */
import { parseArgs } from 'node:util';
import { type DatabaseTarget, DEFAULT_LOG_MAX_BYTES } from '../src/config.js';
import { connect } from '../src/db/connect.js';
import { loadPriceTable } from '../src/logs/pricing/price-table.js';
import { inserterFor } from '../src/logs/write/inserter.js';
import { buildNewLog } from '../src/logs/write/new-log.js';
import { freshDatabase, startGatelog } from './gatelog-process.js';
import { MEASURE, record } from './summary.js';
import { rateLoad } from './rate-load.js';

export const logBody = (i: number) => ({
  model: 'gpt-4o',
  prompt_tokens: 120,
  completion_tokens: 40,
  latency: 0.8,
  customer_identifier: `customer-${i % 500}`,
  metadata: { feature: `f${i % 20}`, plan: i % 3 === 0 ? 'pro' : 'free' },
  input: [{ role: 'user', content: `question number ${i}` }],
  output: 'an answer of ordinary length for a benchmark',
});

/** Two clients, each sending 1,000-log batches back to back for `seconds`: logs stored per second. */
async function batchRate(url: string, key: string, seconds: number): Promise<number> {
  const body = JSON.stringify({ logs: Array.from({ length: 1000 }, (_, i) => logBody(i)) });
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  let logs = 0;
  const end = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    [0, 1].map(async () => {
      while (performance.now() < end) {
        const res = await fetch(`${url}/api/request-logs/batch/`, { method: 'POST', headers, body });
        await res.arrayBuffer();
        if (res.status === 201) logs += 1000;
      }
    }),
  );
  return logs / ((performance.now() - started) / 1000);
}

/** The bench key's authentication, for building logs as the writer gets them (no HTTP). */
export const benchAuth = (org: { id: string; name: string }, keyId: string) => ({
  organizationId: org.id,
  organizationName: org.name,
  keyId,
  keyName: 'bench',
  isTest: false,
  owner: { email: '', first_name: '', last_name: '' },
});

/** The writer's inserter alone, 1,000-log batches back to back: the floor for the batch rate. */
export async function floorRate(
  target: DatabaseTarget,
  org: { id: string; name: string },
  keyId: string,
  seconds: number,
) {
  const handle = connect(target);
  const inserter = inserterFor(handle);
  const prices = loadPriceTable(null);
  const auth = benchAuth(org, keyId);
  let logs = 0;
  const end = performance.now() + seconds * 1000;
  const started = performance.now();
  while (performance.now() < end) {
    const batch = Array.from({ length: 1000 }, (_, i) =>
      buildNewLog({ log_method: 'logging_api', ...logBody(i) } as never, auth, prices, DEFAULT_LOG_MAX_BYTES),
    );
    await inserter.insert(batch);
    logs += 1000;
  }
  const rate = logs / ((performance.now() - started) / 1000);
  await inserter.close?.();
  await handle.db.destroy();
  return rate;
}

export async function runIngestBench(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { db: { type: 'string' }, seconds: { type: 'string', default: '10' } },
  });
  const seconds = Number(values.seconds);
  const rows: string[] = [];
  for (const dialect of values.db ? [values.db] : ['sqlite', 'postgres']) {
    const { target, drop, org, key } = await freshDatabase(dialect);
    try {
      const floor = await floorRate(target, org, key.id, seconds);
      const { child, url } = await startGatelog(target);
      try {
        const headers = { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' };
        await rateLoad(`${url}/api/request-logs/create/`, headers, JSON.stringify(logBody(1)), 500, 2);
        const create = await rateLoad(
          `${url}/api/request-logs/create/`,
          headers,
          JSON.stringify(logBody(2)),
          1000,
          seconds,
        );
        const rate = await batchRate(url, key.key, seconds);
        record('ingest', dialect, 'batch ingestion', rate, 'logs/s');
        record('ingest', dialect, 'floor (inserter alone)', floor, 'logs/s');
        record('ingest', dialect, MEASURE.ingestOfFloor, rate / floor, '×');
        record('ingest', dialect, 'create p99 at 1,000/s', create.p99, 'ms');
        rows.push(
          `| ${dialect} | ${rate.toFixed(0)} | ${floor.toFixed(0)} | ${((100 * rate) / floor).toFixed(0)}% | ${create.p50.toFixed(2)} / ${create.p99.toFixed(2)} | ${create.errors} |`,
        );
        console.log(rows.at(-1));
      } finally {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }
    } finally {
      await drop();
    }
  }
  console.log(`
logging API ingestion, ${seconds} s per measure:
| database | batch logs/s (2 clients, 1,000-log batches) | floor logs/s (inserter alone) | of floor | create ms p50 / p99 at 1,000/s | create non-201 |
|---|---|---|---|---|---|
${rows.join('\n')}`);
}
