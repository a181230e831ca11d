/**
 * What one process, N workers and N nodes carry (docs/scaling.md): proxied calls at a fixed
 * closed-loop concurrency through gatelog in each shape, each on a fresh database with one key whose
 * provider is the fake upstream (fake-upstream-server.ts, answering at once), logging on. Shapes, per
 * database: one process (`serve --workers 1`), `serve --workers N`, and on PostgreSQL N nodes (N
 * `serve --workers 1` processes on N ports, the calls dealt to them in turn); N is 2 unless
 * `--processes` says otherwise.
 *
 * Per shape: calls/s, p50 / p99 from send, errors, the CPU seconds of gatelog's processes (a primary
 * and its workers, every node) from the start of the measured run until its logs were stored, and
 * whether every answered call's log landed (the logs counted in the database until they are all there,
 * or a minute has passed; the bench exits non-zero when one is missing). The fake upstream and this
 * load generator run on the same cores as gatelog: their CPU is printed too, with the machine's core
 * count and load average.
 *
 *   npm run bench -- scale [--db sqlite|postgres|both] [--seconds 20] [--concurrency 64]
 *     [--call embeddings|chat] [--warmup 3] [--processes 2] [--limited]
 */
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import type { DatabaseTarget } from '../src/config.js';
import { connect } from '../src/db/connect.js';
import { ClosedLoad } from './closed-load.js';
import { type GatelogShape, startKeyedGatelog } from './gatelog-process.js';
import { CALLS } from './overhead-bench.js';
import { startServer } from './proxy-bench.js';
import { cpuSeconds, treeCpuSeconds } from './proxy-cpu.js';
import { pct } from './stream-load.js';

interface Shape extends GatelogShape {
  name: string;
  postgresOnly?: boolean;
}

/** One process, then `n` of them as workers of one primary and (PostgreSQL) as separate nodes. */
const shapes = (n: number): Shape[] => [
  { name: 'one process (`--workers 1`)', workers: 1 },
  { name: `\`--workers ${n}\``, workers: n },
  { name: `${n} nodes (${n} × \`--workers 1\`)`, workers: 1, nodes: n, postgresOnly: true },
];

/** How long the logs of the answered calls may take to be stored before the run says some are missing. */
const LANDING_MS = 60_000;

const f1 = (v: number) => v.toFixed(1);
const f2 = (v: number) => v.toFixed(2);
const loadAverage = () =>
  os
    .loadavg()
    .map((v) => v.toFixed(2))
    .join(' / ');

/** Counts the logs until there are `expected`, or LANDING_MS has passed; the last count and the time. */
async function awaitLogs(target: DatabaseTarget, expected: number): Promise<{ stored: number; ms: number }> {
  const started = performance.now();
  // One connection for every count: the wait must not load the database it waits on.
  const handle = connect(target);
  const count = async () =>
    Number(
      (
        await handle.db
          .selectFrom('logs')
          .select((eb) => eb.fn.countAll<number>().as('count'))
          .executeTakeFirstOrThrow()
      ).count,
    );
  try {
    let stored = await count();
    while (stored < expected && performance.now() - started < LANDING_MS) {
      await sleep(100);
      stored = await count();
    }
    return { stored, ms: performance.now() - started };
  } finally {
    await handle.close();
  }
}

export async function runScaleBench(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      db: { type: 'string', default: 'sqlite' },
      seconds: { type: 'string', default: '20' },
      concurrency: { type: 'string', default: '64' },
      call: { type: 'string', default: 'embeddings' },
      warmup: { type: 'string', default: '3' },
      // N in the shapes `--workers N` and N nodes (on a machine with more cores).
      processes: { type: 'string', default: '2' },
      // The key with a budget and a rate limit (never reached): admission's shared bookkeeping on.
      limited: { type: 'boolean', default: false },
    },
  });
  const call = CALLS.find((c) => c.name.startsWith(values.call));
  if (!call) throw new Error(`--call: embeddings or chat, got '${values.call}'`);
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  const warmup = Number(values.warmup);
  const rows: string[] = [];
  const notes: string[] = [];
  const startLoad = loadAverage();
  console.log(
    `scale: ${os.cpus().length} cores, load average ${startLoad}; ${call.name}, concurrency ${concurrency}, ${seconds} s after ${warmup} s of warm-up`,
  );
  for (const dialect of values.db === 'both' ? ['sqlite', 'postgres'] : [values.db]) {
    const fake = await startServer('fake-upstream-server.js');
    try {
      for (const shape of shapes(Number(values.processes)).filter((s) => dialect === 'postgres' || !s.postgresOnly)) {
        const row = await measureShape(dialect, fake.url, fake.child.pid!, shape, {
          call,
          seconds,
          concurrency,
          warmup,
          limited: values.limited,
        });
        rows.push(row.row);
        if (row.note) notes.push(row.note);
        console.log(row.row);
      }
    } finally {
      fake.child.kill('SIGTERM');
    }
  }
  console.log(`
## scale: ${call.name}, closed loop at ${concurrency} calls in flight, ${seconds} s a shape

This machine: ${os.cpus().length} cores; load average (1 / 5 / 15 min) ${startLoad} at the start, ${loadAverage()} at
the end. The load generator (one Node.js process) and the fake upstream share these cores with gatelog
(and PostgreSQL).
Logging on${values.limited ? ', a key budget and a rate limit on' : ', no budget or rate limit'}.

| database | shape | calls/s | p50 ms | p99 ms | errors | gatelog CPU s (µs a call) | fake + load generator CPU s | logs landed (wait) | load average (1 min) before |
|---|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}
${notes.length > 0 ? `\n${notes.join('\n')}\n` : ''}`);
}

/** One shape on its own fresh database: warm-up, the measured run, then its logs counted. */
async function measureShape(
  dialect: string,
  fakeUrl: string,
  fakePid: number,
  shape: Shape,
  o: { call: (typeof CALLS)[number]; seconds: number; concurrency: number; warmup: number; limited: boolean },
): Promise<{ row: string; note: string | null }> {
  const before = os.loadavg()[0];
  const gatelog = await startKeyedGatelog(dialect, fakeUrl, o.limited, shape);
  const load = new ClosedLoad(
    gatelog.nodes.map((n) => n.url),
    `/api${o.call.route}`,
    { 'content-type': 'application/json', authorization: `Bearer ${gatelog.key}` },
    o.call.body,
    o.concurrency,
  );
  try {
    // Warm-up: JIT, connection pools, caches. Its calls are logged too, so they count in the logs expected.
    const warm = await load.run(o.concurrency, o.warmup);
    const pids = gatelog.nodes.map((n) => n.child.pid!);
    const gatelogCpu = () => pids.reduce((sum, pid) => sum + treeCpuSeconds(pid), 0);
    const cpuBefore = gatelogCpu();
    const fakeBefore = cpuSeconds(fakePid);
    const selfBefore = process.cpuUsage();
    const run = await load.run(o.concurrency, o.seconds);
    const selfUsed = process.cpuUsage(selfBefore);
    const sideCpu = cpuSeconds(fakePid) - fakeBefore + (selfUsed.user + selfUsed.system) / 1e6;
    // The writers flush after the answers: their CPU belongs to the calls, so it is counted until the logs land.
    const expected = warm.ok + run.ok;
    const landed = await awaitLogs(gatelog.target, expected);
    const cpu = gatelogCpu() - cpuBefore;
    const all = landed.stored >= expected;
    if (!all) process.exitCode = 1;
    const row = `| ${dialect} | ${shape.name} | ${Math.round(run.ok / run.seconds).toLocaleString('en-US')} | ${f2(pct(run.latencies, 50))} | ${f2(pct(run.latencies, 99))} | ${run.errors} | ${f1(cpu)} (${Math.round((cpu / run.ok) * 1e6)}) | ${f1(sideCpu)} | ${all ? 'all' : `MISSING ${expected - landed.stored}`} (${landed.stored.toLocaleString('en-US')} of ${expected.toLocaleString('en-US')}, ${f1(landed.ms / 1000)} s) | ${f2(before)} |`;
    const note =
      warm.errors > 0
        ? `${dialect}, ${shape.name}: ${warm.errors} errors during the warm-up (not in the table).`
        : null;
    return { row, note };
  } finally {
    await load.close();
    await gatelog.stop();
  }
}
