/**
 * What a budget and a rate limit cost a proxied call (docs/api.md "Budgets", "Rate limits"): two
 * `gatelog serve` processes of this build, each on a database of its own (SQLite, or PostgreSQL), one
 * whose key has a budget and a rate limit (never reached) and one whose key has none, take turns under
 * the same fixed-rate load of chat completions (max_tokens 100): CPU per call (the gatelog process's
 * user + system time over the round, /proc/PID/stat) and the latency's p50 and p99, per round and as
 * medians. Targets, as ratios within the run: CPU per call within +10 %, p50 within +0.2 ms. Then the
 * floor under those targets at the same rate (admission-floor.ts): the least database work per call.
 *
 *   npm run bench -- admission [--db sqlite|postgres|both] [--rate 500] [--seconds 10] [--rounds 5]
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { type ChildProcess } from 'node:child_process';
import { type Floor, postgresFloor, sqliteFloor } from './admission-floor.js';
import { startKeyedGatelog } from './gatelog-process.js';
import { startServer } from './proxy-bench.js';
import { cpuSeconds } from './proxy-cpu.js';
import { rateLoad } from './rate-load.js';

const BODY = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'Say hello to the benchmark.' }],
  max_tokens: 100,
});

interface Side {
  name: string;
  child: ChildProcess;
  url: string;
  key: string;
  stop: () => Promise<void>;
  cpu: number[];
  p50: number[];
  p99: number[];
}

export async function runAdmissionBench(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      db: { type: 'string', default: 'sqlite' },
      rate: { type: 'string', default: '500' },
      seconds: { type: 'string', default: '10' },
      rounds: { type: 'string', default: '5' },
    },
  });
  const dialects = values.db === 'both' ? ['sqlite', 'postgres'] : [values.db];
  for (const dialect of dialects) {
    await benchOne(dialect, Number(values.rate), Number(values.seconds), Number(values.rounds));
  }
}

async function benchOne(dialect: string, rate: number, seconds: number, rounds: number): Promise<void> {
  const { child: fake, url: fakeUrl } = await startServer('fake-upstream-server.js');
  const sides = [
    await startSide('none', dialect, fakeUrl, false),
    await startSide('budget + limit', dialect, fakeUrl, true),
  ];
  const headersOf = (side: Side) => ({ authorization: `Bearer ${side.key}`, 'content-type': 'application/json' });
  for (const side of sides) await rateLoad(`${side.url}/api/chat/completions`, headersOf(side), BODY, rate, 3);
  const rows: string[] = [];
  for (let round = 1; round <= rounds; round++) {
    const cells: string[] = [];
    for (const side of round % 2 ? sides : [...sides].reverse()) {
      const before = cpuSeconds(side.child.pid!);
      const result = await rateLoad(`${side.url}/api/chat/completions`, headersOf(side), BODY, rate, seconds);
      const micros = ((cpuSeconds(side.child.pid!) - before) / result.ok) * 1e6;
      side.cpu.push(micros);
      side.p50.push(result.p50);
      side.p99.push(result.p99);
      cells.push(
        `${side.name}: ${micros.toFixed(0)} µs, p50 ${result.p50.toFixed(2)} / p99 ${result.p99.toFixed(2)} ms (${result.ok} ok, ${result.errors} errors)`,
      );
    }
    rows.push(`| ${round} | ${cells.join(' | ')} |`);
    console.log(rows.at(-1));
  }
  for (const side of sides) await side.stop();
  fake.kill('SIGTERM');
  const floors = dialect === 'sqlite' ? await sqliteFloor(rate, seconds) : await postgresFloor(rate, seconds);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const [none, limited] = sides;
  const cpu = (median(limited.cpu) - median(none.cpu)) / median(none.cpu);
  const p50 = median(limited.p50) - median(none.p50);
  console.log(`
Admission on ${dialect}: chat completions at ${rate} calls/s, ${seconds} s rounds, ${os.cpus().length} cores
${rows.join('\n')}
| | none | budget + limit | change | target |
|---|---|---|---|---|
| CPU per call (median) | ${median(none.cpu).toFixed(0)} µs | ${median(limited.cpu).toFixed(0)} µs | ${(cpu * 100).toFixed(1)} % | ≤ +10 % ${cpu <= 0.1 ? 'met' : 'MISSED'} |
| latency p50 (median) | ${median(none.p50).toFixed(2)} ms | ${median(limited.p50).toFixed(2)} ms | ${p50 >= 0 ? '+' : ''}${p50.toFixed(2)} ms | ≤ +0.2 ms ${p50 <= 0.2 ? 'met' : 'MISSED'} |
| latency p99 (median) | ${median(none.p99).toFixed(2)} ms | ${median(limited.p99).toFixed(2)} ms | | |
${floorTable(floors, median(none.cpu))}`);
}

/** The floor's rows: each operation's CPU as a share of a call's with no admission, and its latency. */
function floorTable(floors: Floor[], noneMicros: number): string {
  const rows = floors.map(
    (f) =>
      `| ${f.name} | ${f.cpuMicros.toFixed(0)} µs (+${((100 * f.cpuMicros) / noneMicros).toFixed(1)} % of a call) | ${f.p50.toFixed(2)} ms | ${f.p99.toFixed(2)} ms |`,
  );
  return ['', '| floor, at the same rate | CPU per operation | p50 | p99 |', '|---|---|---|---|', ...rows].join('\n');
}

/** One side of the comparison: a gatelog whose key has (`limited`) or has not a budget and a rate limit. */
async function startSide(name: string, dialect: string, fakeUrl: string, limited: boolean): Promise<Side> {
  const gatelog = await startKeyedGatelog(dialect, fakeUrl, limited);
  return {
    name,
    child: gatelog.child,
    url: gatelog.url,
    key: gatelog.key,
    stop: gatelog.stop,
    cpu: [],
    p50: [],
    p99: [],
  };
}
