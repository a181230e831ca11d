/**
 * gatelog's own cost per call, in the public gateway boards' method: against a do-nothing Node proxy
 * (minimal-stream-proxy.ts: node:http in, undici out, the provider's bytes piped, no parsing, no log) on
 * the same fake provider answering at once (fake-upstream-server.ts), each in its own process on
 * 127.0.0.1, all in one run. gatelog logs every call, and its key has a budget and a rate limit (never
 * reached). Per database:
 *
 * 1. Calls at a fixed rate — embeddings, and chat completions answered as JSON — direct, through the
 *    floor proxy, through the reading floor (minimal-reading-proxy.ts: Fastify, the request and the
 *    answer parsed, no log), through the logging floor (minimal-logging-proxy.ts: the reading floor
 *    plus the least exact admission and a log written by gatelog's own writer, with its own database)
 *    and through gatelog, in a turning order each round: CPU per call of the process in the middle (all
 *    its threads), latency p50 / p99 from send, and `/health`'s latency sampled while gatelog carries
 *    the load.
 * 2. Concurrency 1: the same calls one after another; the p99 gatelog (and each floor) adds to direct.
 * 3. Streams (overhead-streams.ts): time to first content at 10 streams, CPU per streamed event at
 *    saturation, paced streams held at 128, 256 and 512 at once (a stall: a gap over 200 ms), gatelog's
 *    resident memory during and after.
 *
 * Targets, as ratios within the run: CPU per call ≤ 1.8× the floor's; added p99 at the fixed rate
 * ≤ 2 ms; added p99 at concurrency 1 ≤ 0.5 ms; the stream targets in overhead-streams.ts.
 *
 *   npm run bench -- overhead [--db sqlite|postgres|both] [--rate 1000] [--seconds 10] [--rounds 3]
 *     [--sequential 3000] [--paced 128,256,512] [--paced-seconds 10] [--only calls,sequential,streams]
 *     [--call embeddings|chat] [--open]
 */
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { postgresFloor, sqliteFloor } from './admission-floor.js';
import { freshDatabase, startKeyedGatelog } from './gatelog-process.js';
import { floorRate } from './ingest-bench.js';
import { runStreamPhases } from './overhead-streams.js';
import { BODY as EMBEDDINGS_BODY, startServer } from './proxy-bench.js';
import { cpuSeconds } from './proxy-cpu.js';
import { rateLoad } from './rate-load.js';
import { median, pct, turn } from './stream-load.js';

/** One way to the fake: its origin, the prefix before an OpenAI route, the process in the middle. */
export interface OverheadPath {
  name: 'direct' | 'floor' | 'reading' | 'logging' | 'gatelog';
  origin: string;
  prefix: string;
  headers: Record<string, string>;
  /** The process between the client and the fake; the fake itself for direct. */
  pid: number;
}

export const CALLS = [
  { name: 'embeddings', route: '/embeddings', body: EMBEDDINGS_BODY },
  {
    name: 'chat (JSON)',
    route: '/chat/completions',
    body: JSON.stringify({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Say hello to the benchmark.' }],
      max_tokens: 100,
    }),
  },
];

/** A call's CPU µs per call through the floor proxy, the reading floor and gatelog. */
interface CallCpu {
  floor: number;
  reading: number;
  logging: number;
  gatelog: number;
}

export const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
const f1 = (v: number) => v.toFixed(1);
const f2 = (v: number) => v.toFixed(2);
const plus = (v: number) => `${v >= 0 ? '+' : ''}${v.toFixed(2)}`;

export async function runOverheadBench(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      db: { type: 'string', default: 'sqlite' },
      rate: { type: 'string', default: '1000' },
      seconds: { type: 'string', default: '10' },
      rounds: { type: 'string', default: '3' },
      sequential: { type: 'string', default: '3000' },
      paced: { type: 'string', default: '128,256,512' },
      'paced-seconds': { type: 'string', default: '10' },
      only: { type: 'string', default: 'calls,sequential,streams' },
      // One call's rows only (e.g. for a profile of it): embeddings or chat.
      call: { type: 'string' },
      // The key without its budget and rate limit: what admission adds, by difference.
      open: { type: 'boolean', default: false },
    },
  });
  const phases = new Set(values.only.split(','));
  const calls = CALLS.filter((c) => !values.call || c.name.startsWith(values.call));
  for (const dialect of values.db === 'both' ? ['sqlite', 'postgres'] : [values.db]) {
    const { child: fake, url: fakeUrl } = await startServer('fake-upstream-server.js');
    const { child: floor, url: floorUrl } = await startServer('minimal-stream-proxy.js', [fakeUrl]);
    const { child: reading, url: readingUrl } = await startServer('minimal-reading-proxy.js', [fakeUrl]);
    const loggingDb = await freshDatabase(dialect);
    const { child: logging, url: loggingUrl } = await startServer('minimal-logging-proxy.js', [
      fakeUrl,
      JSON.stringify(loggingDb.target),
      JSON.stringify(loggingDb.org),
      loggingDb.key.id,
    ]);
    const gatelog = await startKeyedGatelog(dialect, fakeUrl, !values.open);
    const json = { 'content-type': 'application/json' };
    const paths: OverheadPath[] = [
      {
        name: 'direct',
        origin: new URL(fakeUrl).origin,
        prefix: new URL(fakeUrl).pathname,
        headers: json,
        pid: fake.pid!,
      },
      { name: 'floor', origin: floorUrl, prefix: '', headers: json, pid: floor.pid! },
      { name: 'reading', origin: readingUrl, prefix: '', headers: json, pid: reading.pid! },
      { name: 'logging', origin: loggingUrl, prefix: '', headers: json, pid: logging.pid! },
      {
        name: 'gatelog',
        origin: gatelog.url,
        prefix: '/api',
        headers: { ...json, authorization: `Bearer ${gatelog.key}` },
        pid: gatelog.child.pid!,
      },
    ];
    const report: string[] = [
      `## overhead on ${dialect}: ${os.cpus().length} cores, logging on, ${values.open ? 'no budget or rate limit' : 'a key budget and a rate limit on'}`,
    ];
    try {
      const rounds = Number(values.rounds);
      if (phases.has('calls')) {
        const { text, cpu } = await ratePhase(paths, calls, Number(values.rate), Number(values.seconds), rounds);
        report.push(text, await floorsPhase(dialect, Number(values.rate), Number(values.seconds), cpu));
      }
      // The reading floor answers JSON calls only, and is a CPU floor: the other phases compare with the
      // proxy and the logging floor.
      const proxied = paths.filter((p) => p.name !== 'reading');
      if (phases.has('sequential'))
        report.push(await sequentialPhase(proxied, calls, Number(values.sequential), rounds));
      if (phases.has('streams')) {
        const levels = values.paced.split(',').map(Number);
        report.push(await runStreamPhases(proxied, rounds, levels, Number(values['paced-seconds'])));
      }
    } finally {
      await gatelog.stop();
      floor.kill('SIGTERM');
      reading.kill('SIGTERM');
      logging.kill('SIGTERM');
      await new Promise((resolve) => logging.once('exit', resolve));
      await loggingDb.drop();
      fake.kill('SIGTERM');
    }
    console.log(`\n${report.join('\n\n')}\n`);
  }
}

/** Latencies (ms) of `/health` asked every 20 ms until `stop` resolves. */
async function sampleHealth(origin: string, stop: Promise<unknown>): Promise<number[]> {
  const pool = new Pool(origin, { connections: 1 });
  const times: number[] = [];
  let stopped = false;
  void stop.then(() => (stopped = true));
  while (!stopped) {
    const started = performance.now();
    const res = await pool.request({ path: '/health', method: 'GET' });
    await res.body.dump();
    times.push(performance.now() - started);
    await sleep(20);
  }
  await pool.close();
  return times;
}

/** Phase 1: each call at a fixed rate on every path in turn; CPU per call, p50 / p99, /health's p99. */
async function ratePhase(
  paths: OverheadPath[],
  calls: typeof CALLS,
  rate: number,
  seconds: number,
  rounds: number,
): Promise<{ text: string; cpu: Map<string, CallCpu> }> {
  const cpuByCall = new Map<string, CallCpu>();
  const rows = [
    `### Calls at ${rate}/s (${seconds} s rounds, median of ${rounds})`,
    '',
    '| call | floor CPU µs/call | reading floor | logging floor | gatelog CPU µs/call | ratio (≤ 1.8×) | against the logging floor | direct p50 / p99 ms | floor added p50 / p99 | logging floor added p50 / p99 | gatelog added p50 / p99 (p99 ≤ 2 ms) | /health p99 ms under load |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const call of calls) {
    const by = new Map(paths.map((p) => [p.name, { cpu: [] as number[], p50: [] as number[], p99: [] as number[] }]));
    const health: number[] = [];
    const load = (p: OverheadPath, s: number) =>
      rateLoad(`${p.origin}${p.prefix}${call.route}`, p.headers, call.body, rate, s);
    for (const p of paths) await load(p, 2); // warm-up: JIT, pools, first-call caches
    for (let round = 1; round <= rounds; round++) {
      for (const p of turn(paths, round)) {
        const before = cpuSeconds(p.pid);
        const running = load(p, seconds);
        const sampled = p.name === 'gatelog' ? sampleHealth(p.origin, running) : Promise.resolve([]);
        const result = await running;
        health.push(...(await sampled));
        const figures = by.get(p.name)!;
        figures.cpu.push(((cpuSeconds(p.pid) - before) / result.ok) * 1e6);
        figures.p50.push(result.sentP50);
        figures.p99.push(result.sentP99);
        if (result.errors > 0) console.log(`${call.name} ${p.name} round ${round}: ${result.errors} errors`);
      }
    }
    const m = (name: OverheadPath['name'], key: 'cpu' | 'p50' | 'p99') => median(by.get(name)![key]);
    const ratio = m('gatelog', 'cpu') / m('floor', 'cpu');
    cpuByCall.set(call.name, {
      floor: m('floor', 'cpu'),
      reading: m('reading', 'cpu'),
      logging: m('logging', 'cpu'),
      gatelog: m('gatelog', 'cpu'),
    });
    const added = (name: OverheadPath['name'], key: 'p50' | 'p99') => m(name, key) - m('direct', key);
    rows.push(
      `| ${call.name} | ${f1(m('floor', 'cpu'))} | ${f1(m('reading', 'cpu'))} | ${f1(m('logging', 'cpu'))} (${f2(m('logging', 'cpu') / m('floor', 'cpu'))}×) | ${f1(m('gatelog', 'cpu'))} | ${f2(ratio)}× ${verdict(ratio <= 1.8)} | ${f2(m('gatelog', 'cpu') / m('logging', 'cpu'))}× | ${f2(m('direct', 'p50'))} / ${f2(m('direct', 'p99'))} | ${plus(added('floor', 'p50'))} / ${plus(added('floor', 'p99'))} | ${plus(added('logging', 'p50'))} / ${plus(added('logging', 'p99'))} | ${plus(added('gatelog', 'p50'))} / ${plus(added('gatelog', 'p99'))} ${verdict(added('gatelog', 'p99') <= 2)} | ${f2(pct(health, 99))} |`,
    );
    console.log(rows.at(-1));
  }
  return { text: rows.join('\n'), cpu: cpuByCall };
}

/**
 * The floor of a logged, admitted call: the floor proxy's CPU per call, plus the least database work an
 * exact shared admission needs (admission-floor.ts, at the same rate) and the CPU of building and
 * inserting one log with the writer's own inserter, no HTTP (ingest-bench.ts). gatelog's CPU against it.
 */
async function floorsPhase(dialect: string, rate: number, seconds: number, cpu: Map<string, CallCpu>): Promise<string> {
  const floors = dialect === 'sqlite' ? await sqliteFloor(rate, seconds) : await postgresFloor(rate, seconds);
  const admission = floors.at(-1)!;
  const { target, drop, org, key } = await freshDatabase(dialect);
  const before = cpuSeconds(process.pid);
  const logsPerSecond = await floorRate(target, org, key.id, seconds);
  const logMicros = ((cpuSeconds(process.pid) - before) * 1e6) / (logsPerSecond * seconds);
  await drop();
  const rows = [
    '### Where the floor lies: the least work of a logged, admitted call (CPU µs per call)',
    '',
    `Admission: ${admission.name}, ${f1(admission.cpuMicros)} µs. A log built and inserted by the writer's inserter alone (1,000-log batches, no HTTP, no search index): ${f1(logMicros)} µs.`,
    '',
    'The reading floor (minimal-reading-proxy.ts) is Fastify with the request and the answer parsed, as a gateway must to read the model and the usage.',
    '',
    '| call | floor proxy | + admission + log | reading floor | + admission + log | the logging floor, measured whole | gatelog | gatelog against the reading floor + admission + log |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const [name, { floor, reading, logging, gatelog }] of cpu) {
    const least = floor + admission.cpuMicros + logMicros;
    const leastReading = reading + admission.cpuMicros + logMicros;
    rows.push(
      `| ${name} | ${f1(floor)} | ${f1(least)} (${f2(least / floor)}× the proxy) | ${f1(reading)} (${f2(reading / floor)}×) | ${f1(leastReading)} (${f2(leastReading / floor)}×) | ${f1(logging)} (${f2(logging / floor)}×) | ${f1(gatelog)} | ${f2(gatelog / leastReading)}× |`,
    );
  }
  return rows.join('\n');
}

/** Phase 2: calls one after another on one connection; each path's p50 / p99, gatelog's added p99. */
async function sequentialPhase(
  paths: OverheadPath[],
  calls: typeof CALLS,
  count: number,
  rounds: number,
): Promise<string> {
  const rows = [
    `### Concurrency 1 (${count} calls a path, in ${rounds} turns)`,
    '',
    '| call | direct p50 / p99 ms | floor added p50 / p99 | logging floor added p50 / p99 | gatelog added p50 / p99 (p99 ≤ 0.5 ms) |',
    '|---|---|---|---|---|',
  ];
  for (const call of calls) {
    const times = new Map(paths.map((p) => [p.name, [] as number[]]));
    const pools = new Map(paths.map((p) => [p.name, new Pool(p.origin, { connections: 1 })]));
    const one = async (p: OverheadPath) => {
      const started = performance.now();
      const res = await pools
        .get(p.name)!
        .request({ path: `${p.prefix}${call.route}`, method: 'POST', headers: p.headers, body: call.body });
      await res.body.arrayBuffer();
      if (res.statusCode !== 200) throw new Error(`${p.name} ${call.name}: ${res.statusCode}`);
      return performance.now() - started;
    };
    for (const p of paths) for (let i = 0; i < 200; i++) await one(p);
    for (let round = 1; round <= rounds; round++) {
      for (const p of turn(paths, round)) {
        for (let i = 0; i < Math.ceil(count / rounds); i++) times.get(p.name)!.push(await one(p));
      }
    }
    for (const pool of pools.values()) await pool.close();
    const at = (name: OverheadPath['name'], p: number) => pct(times.get(name)!, p);
    const added = (name: OverheadPath['name'], p: number) => at(name, p) - at('direct', p);
    rows.push(
      `| ${call.name} | ${f2(at('direct', 50))} / ${f2(at('direct', 99))} | ${plus(added('floor', 50))} / ${plus(added('floor', 99))} | ${plus(added('logging', 50))} / ${plus(added('logging', 99))} | ${plus(added('gatelog', 50))} / ${plus(added('gatelog', 99))} ${verdict(added('gatelog', 99) <= 0.5)} |`,
    );
    console.log(rows.at(-1));
  }
  return rows.join('\n');
}
