/**
 * CPU that gatelog spends per proxied call, this build against another (e.g. the commit before a
 * change on the hot path): both run at once, each with its own fake provider and SQLite file, and take
 * turns under the same fixed-rate load, so the machine's noisy stretches fall on both alike. CPU is the
 * gatelog process's user + system time (/proc/PID/stat) over the round, divided by the calls answered.
 *
 *   npm run bench -- proxy-cpu --baseline OTHER_CHECKOUT/bin/gatelog.js [--rate 1000] [--seconds 10] [--rounds 5]
 */
import fs from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { BODY, startProxyStack } from './proxy-bench.js';
import { rateLoad } from './rate-load.js';

/** A process's /proc/PID/stat fields after the command name (which may hold spaces): state is [0]. */
function statFields(pid: number): string[] {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** User + system CPU seconds of a process so far (all its threads). */
export function cpuSeconds(pid: number): number {
  // utime and stime are the 14th and 15th fields of the line.
  const fields = statFields(pid);
  const ticks = Number(fields[11]) + Number(fields[12]);
  return ticks / 100;
}

/**
 * User + system CPU seconds of a process and every process under it (a `serve --workers N` primary and
 * its workers): its own, its children's that have exited and been waited for (cutime, cstime), and each
 * living child's, recursively. A process gone meanwhile counts 0.
 */
export function treeCpuSeconds(pid: number): number {
  let fields: string[];
  try {
    fields = statFields(pid);
  } catch {
    return 0;
  }
  const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  let children = 0;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // ppid is the 4th field of the line.
      if (Number(statFields(Number(entry))[1]) === pid) children += treeCpuSeconds(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return ticks / 100 + children;
}

export async function runProxyCpuBench(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      baseline: { type: 'string' },
      rate: { type: 'string', default: '1000' },
      seconds: { type: 'string', default: '10' },
      rounds: { type: 'string', default: '5' },
    },
  });
  if (!values.baseline) {
    console.log('proxy-cpu: skipped (it needs --baseline PATH/bin/gatelog.js of the build to compare with)');
    return;
  }
  const rate = Number(values.rate);
  const seconds = Number(values.seconds);
  const stacks = [
    { name: 'this build', stack: await startProxyStack(), perCall: [] as number[] },
    { name: 'baseline', stack: await startProxyStack(values.baseline), perCall: [] as number[] },
  ];
  for (const { stack } of stacks) {
    // Warm-up: JIT and connection pools.
    const headers = { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json' };
    await rateLoad(`${stack.gatelogUrl}/api/embeddings`, headers, BODY, rate, 3);
  }
  const rows: string[] = [];
  for (let round = 1; round <= Number(values.rounds); round++) {
    const cells: string[] = [];
    for (const entry of round % 2 ? stacks : [...stacks].reverse()) {
      const { stack } = entry;
      const headers = { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json' };
      const before = cpuSeconds(stack.gatelogPid);
      const result = await rateLoad(`${stack.gatelogUrl}/api/embeddings`, headers, BODY, rate, seconds);
      const micros = ((cpuSeconds(stack.gatelogPid) - before) / result.ok) * 1e6;
      entry.perCall.push(micros);
      cells.push(`${entry.name} ${micros.toFixed(1)} µs (${result.ok} calls, ${result.errors} errors)`);
    }
    rows.push(`| ${round} | ${cells.join(' | ')} |`);
    console.log(rows.at(-1));
  }
  for (const { stack } of stacks) await stack.stop();
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const [mine, base] = stacks.map((s) => median(s.perCall));
  console.log(`
gatelog CPU per proxied call at ${rate} req/s, ${seconds} s rounds, ${os.cpus().length} cores:
${rows.join('\n')}
median: this build ${mine.toFixed(1)} µs, baseline ${base.toFixed(1)} µs: ${(((mine - base) / base) * 100).toFixed(1)}% ${mine >= base ? 'more' : 'less'}`);
}
