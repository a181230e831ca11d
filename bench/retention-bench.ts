/**
 * The retention sweep under load, per database: a store of expired logs (40 days old, retention 30),
 * then gatelog serving proxied chat calls at a steady rate (to the fake upstream) while /health is asked
 * every 20 ms — first with retention off (idle), then with the sweep deleting the expired logs. Targets:
 * /health p99 under 50 ms during the sweep, proxied p99 within 2 ms of the idle run.
 *
 *   npm run bench -- retention [--db sqlite|postgres] [--rows 1000000] [--seconds 30] [--rate 200]
 *
 * With --partition (PostgreSQL), a month of logs dropped whole instead (partition-drop.ts); with
 * `--partition --store 10000000 [--days 30]`, the months of the `list` bench's store of that size.
 */
import crypto from 'node:crypto';
import { parseArgs } from 'node:util';
import { connect } from '../src/db/connect.js';
import { loadPriceTable } from '../src/logs/pricing/price-table.js';
import { inserterFor } from '../src/logs/write/inserter.js';
import { buildNewLog } from '../src/logs/write/new-log.js';
import { setProviderKey } from '../src/providers/credentials.js';
import { BUILT_IN_PROVIDER_KINDS } from '../src/providers/registry.js';
import { percentile } from './bench-store.js';
import { freshDatabase, startGatelog } from './gatelog-process.js';
import { benchAuth } from './ingest-bench.js';
import { startServer } from './proxy-bench.js';
import { rateLoad } from './rate-load.js';
import { record } from './summary.js';
import { runPartitionDrop, runStoreMonthDrop } from './partition-drop.js';
import { DEFAULT_LOG_MAX_BYTES } from '../src/config.js';

const DAY = 86_400_000;

/** `rows` logs stamped `timeOf(k)` (default: 40 days old), written by the writer's inserter (no HTTP). */
async function seedExpired(
  target: Parameters<typeof connect>[0],
  org: { id: string; name: string },
  keyId: string,
  rows: number,
  timeOf?: (k: number) => number,
) {
  const handle = connect(target);
  const inserter = inserterFor(handle);
  const prices = loadPriceTable(null);
  const auth = benchAuth(org, keyId);
  const old = Date.now() - 40 * DAY;
  const stamp = timeOf ?? ((k: number) => old - (k % (10 * DAY)));
  for (let at = 0; at < rows; at += 1000) {
    const batch = Array.from({ length: Math.min(1000, rows - at) }, (_, i) =>
      buildNewLog(
        {
          log_method: 'logging_api',
          model: 'gpt-4o',
          prompt_tokens: 120,
          completion_tokens: 40,
          customer_identifier: `customer-${i % 500}`,
          metadata: { feature: `f${i % 20}` },
          input: [{ role: 'user', content: `question number ${at + i}` }],
          output: 'an answer of ordinary length for a benchmark',
          timestamp: stamp(at + i),
        } as never,
        auth,
        prices,
        DEFAULT_LOG_MAX_BYTES,
      ),
    );
    await inserter.insert(batch);
  }
  await inserter.close?.();
  await handle.close();
}

/** /health every 20 ms until `stop`: each answer's time. */
async function pollHealth(url: string, stop: { done: boolean }): Promise<number[]> {
  const times: number[] = [];
  while (!stop.done) {
    const started = performance.now();
    const res = await fetch(`${url}/health`);
    await res.arrayBuffer();
    times.push(performance.now() - started);
    await new Promise((r) => setTimeout(r, 20));
  }
  return times.sort((a, b) => a - b);
}

const CHAT_BODY = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'How long are logs kept?' }],
});

/** The organization's OpenAI key pointed at the fake upstream; answers the secret key it is sealed with. */
async function providerSecret(target: Parameters<typeof connect>[0], organizationId: string, fakeUrl: string) {
  const secret = crypto.randomBytes(32).toString('hex');
  const handle = connect(target);
  await setProviderKey(
    handle.db,
    Buffer.from(secret, 'hex'),
    { organizationId, provider: 'openai', apiKey: 'sk-bench', baseUrl: fakeUrl },
    BUILT_IN_PROVIDER_KINDS,
  );
  await handle.close();
  return secret;
}

export async function runRetentionBench(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      db: { type: 'string', default: 'sqlite' },
      rows: { type: 'string', default: '200000' },
      seconds: { type: 'string', default: '30' },
      rate: { type: 'string', default: '200' },
      partition: { type: 'boolean', default: false },
      // With --partition: the months of the `list` bench's store of this many logs (over --days) instead.
      store: { type: 'string' },
      days: { type: 'string', default: '30' },
    },
  });
  const db = values.db!;
  const rows = Number(values.rows);
  const seconds = Number(values.seconds);
  const rate = Number(values.rate);
  if (values.partition && db !== 'postgres') throw new Error('--partition: PostgreSQL only (SQLite keeps one table)');
  if (values.partition && values.store !== undefined) {
    await runStoreMonthDrop(Number(values.store), Number(values.days), pollHealth);
    return;
  }
  const { child: fake, url: fakeUrl } = await startServer('fake-upstream-server.js');
  const { target, drop, org, key } = await freshDatabase(db);
  try {
    if (values.partition) {
      await runPartitionDrop({
        target,
        org,
        secret: await providerSecret(target, org.id, fakeUrl),
        headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
        body: CHAT_BODY,
        rows,
        seconds,
        rate,
        // Spread evenly over the month.
        seed: (from, to) => seedExpired(target, org, key.id, rows, (k) => from + Math.floor(((to - from) * k) / rows)),
        pollHealth,
      });
      return;
    }
    const seeding = performance.now();
    await seedExpired(target, org, key.id, rows);
    console.log(`${db}: ${rows} expired logs seeded in ${((performance.now() - seeding) / 1000).toFixed(0)} s`);
    const secret = await providerSecret(target, org.id, fakeUrl);
    const headers = { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' };
    const body = CHAT_BODY;

    const phase = async (retentionDays: string) => {
      const gatelog = await startGatelog(target, {
        secret,
        env: { GATELOG_RETENTION_DAYS: retentionDays, GATELOG_RETENTION_INTERVAL_S: '1' },
      });
      try {
        await rateLoad(`${gatelog.url}/api/chat/completions`, headers, body, rate, 2);
        const stop = { done: false };
        const health = pollHealth(gatelog.url, stop);
        const proxied = await rateLoad(`${gatelog.url}/api/chat/completions`, headers, body, rate, seconds);
        stop.done = true;
        const times = await health;
        const report = (await (await fetch(`${gatelog.url}/health`)).json()) as {
          retention: { deleted_logs: number } | null;
        };
        const metrics = await (await fetch(`${gatelog.url}/metrics`)).text();
        const deleted = Number(/gatelog_retention_deleted_logs_total (\d+)/.exec(metrics)?.[1] ?? 0);
        return { proxied, healthP99: percentile(times, 99), deleted, last: report.retention };
      } finally {
        gatelog.child.kill('SIGTERM');
        await new Promise((r) => gatelog.child.once('exit', r));
      }
    };
    const idle = await phase('0');
    const sweeping = await phase('30');
    const moved = sweeping.proxied.p99 - idle.proxied.p99;
    record('retention', db, '/health p99 during a sweep', sweeping.healthP99, 'ms');
    record('retention', db, 'proxied p99 moved by a sweep', moved, 'ms');
    console.log(`
retention sweep of ${rows.toLocaleString('en')} expired logs (${db}), ${seconds} s of ${rate} proxied calls/s:
| run | logs deleted meanwhile | /health p99 ms | proxied p50 / p99 ms |
|---|---|---|---|
| idle (retention off) | ${idle.deleted} | ${idle.healthP99.toFixed(1)} | ${idle.proxied.p50.toFixed(2)} / ${idle.proxied.p99.toFixed(2)} |
| sweeping | ${sweeping.deleted} | ${sweeping.healthP99.toFixed(1)} | ${sweeping.proxied.p50.toFixed(2)} / ${sweeping.proxied.p99.toFixed(2)} |
proxied p99 moved ${moved.toFixed(2)} ms (target ≤ 2); /health p99 ${sweeping.healthP99.toFixed(1)} ms (target < 50)`);
  } finally {
    fake.kill('SIGTERM');
    await drop();
  }
}
