/**
 * Load with nothing lost, bench-sized: mixed calls (half proxied embeddings, the rest single logs and
 * batches of ten through the logging API) at a fixed rate across two `gatelog serve` processes on one
 * PostgreSQL database (one process on SQLite), for five minutes; then what the answers acknowledged is
 * counted against what is stored.
 *
 *   npm run bench -- soak [--db postgres|sqlite] [--rate 1000] [--seconds 300] [--nodes 2]
 */
import crypto from 'node:crypto';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { connect } from '../src/db/connect.js';
import { setProviderKey } from '../src/providers/credentials.js';
import { BUILT_IN_PROVIDER_KINDS } from '../src/providers/registry.js';
import { acknowledgedIds, runMixedLoad } from '../test/support/mixed-load.js';
import { percentile } from './bench-store.js';
import { freshDatabase, rssMb, startGatelog } from './gatelog-process.js';
import { startServer } from './proxy-bench.js';

export interface SoakResult {
  db: string;
  nodes: number;
  rate: number;
  seconds: number;
  sent: number;
  acknowledged: number;
  stored: number;
  missing: number;
  tally: Record<string, number>;
  proxiedP50: number;
  proxiedP99: number;
  peakRssMb: number[];
}

export async function soak(
  db: 'postgres' | 'sqlite',
  rate: number,
  seconds: number,
  nodeCount = db === 'postgres' ? 2 : 1,
): Promise<SoakResult> {
  const { target, drop, org, key } = await freshDatabase(db);
  const fake = await startServer('fake-upstream-server.js');
  const secret = crypto.randomBytes(32).toString('hex');
  const handle = connect(target);
  await setProviderKey(
    handle.db,
    Buffer.from(secret, 'hex'),
    {
      organizationId: org.id,
      provider: 'openai',
      apiKey: 'sk-soak',
      baseUrl: fake.url,
    },
    BUILT_IN_PROVIDER_KINDS,
  );
  await handle.db.destroy();
  const nodes = await Promise.all(Array.from({ length: nodeCount }, () => startGatelog(target, { secret })));
  const peak = nodes.map(() => 0);
  const sampler = setInterval(() => nodes.forEach((n, i) => (peak[i] = Math.max(peak[i], rssMb(n.child.pid!)))), 1000);
  try {
    let answered = 0;
    const started = performance.now();
    const progress = setInterval(() => {
      const elapsed = (performance.now() - started) / 1000;
      const sent = Math.min(rate * seconds, Math.floor(elapsed * rate));
      console.error(`  ${elapsed.toFixed(0)} s: ${answered} answered, ${sent - answered} in flight`);
    }, 10_000);
    const result = await runMixedLoad({
      nodes: nodes.map((n) => n.url),
      key: key.key,
      rate,
      seconds,
      onOutcome: () => (answered += 1),
    }).finally(() => clearInterval(progress));
    clearInterval(sampler);
    console.error('  load done; stopping the nodes');
    // Proxied calls' logs are written a moment after their answer; a clean stop writes what is queued.
    for (const node of nodes) {
      node.child.kill('SIGTERM');
      await new Promise((resolve) => node.child.once('exit', resolve));
    }
    const acknowledged = acknowledgedIds(result);
    const counted = connect(target);
    const rows = (await sql<{ unique_id: string }>`select unique_id from logs`.execute(counted.db)).rows;
    await counted.db.destroy();
    const stored = new Set(rows.map((r) => r.unique_id));
    const proxied = result.outcomes
      .filter((o) => o.kind === 'proxied')
      .map((o) => o.latencyMs)
      .sort((a, b) => a - b);
    return {
      db,
      nodes: nodeCount,
      rate,
      seconds,
      sent: result.outcomes.length,
      acknowledged: acknowledged.length,
      stored: rows.length,
      missing: acknowledged.filter((id) => !stored.has(id)).length,
      tally: result.tally,
      proxiedP50: percentile(proxied, 50),
      proxiedP99: percentile(proxied, 99),
      peakRssMb: peak,
    };
  } finally {
    clearInterval(sampler);
    for (const node of nodes) node.child.kill('SIGKILL');
    fake.child.kill('SIGTERM');
    await drop();
  }
}

export async function runSoakBench(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      db: { type: 'string', default: 'postgres' },
      rate: { type: 'string', default: '1000' },
      seconds: { type: 'string', default: '300' },
      nodes: { type: 'string' },
    },
  });
  const nodes = values.nodes === undefined ? undefined : Number(values.nodes);
  const r = await soak(values.db as 'postgres' | 'sqlite', Number(values.rate), Number(values.seconds), nodes);
  console.log(`\n## Soak: ${r.rate} calls/s for ${r.seconds} s, ${r.nodes} node(s) on ${r.db}`);
  console.log(`calls sent ${r.sent}; by kind and status ${JSON.stringify(r.tally)}`);
  console.log(`logs acknowledged ${r.acknowledged}, stored ${r.stored}, acknowledged but missing ${r.missing}`);
  console.log(`proxied latency p50 ${r.proxiedP50.toFixed(2)} ms, p99 ${r.proxiedP99.toFixed(2)} ms`);
  console.log(`peak RSS per node (MB): ${r.peakRssMb.map((m) => m.toFixed(0)).join(', ')}`);
  if (r.missing > 0 || r.stored !== r.acknowledged) process.exitCode = 1;
}
