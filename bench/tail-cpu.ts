/**
 * What live-tail clients cost the proxy (docs/api.md "Live tail"): gatelog's CPU per proxied call at a
 * fixed rate, in rounds without tails and with N tails connected (GET /api/request-logs/stream/, each
 * sent every logged call), taking turns so that the machine's noisy stretches fall on both alike. CPU is
 * the gatelog process's user + system time (/proc/PID/stat) over the round, divided by the calls
 * answered. The tails are read by a process of their own (tail-readers.ts).
 *
 *   npm run bench -- tail-cpu [--tails 100] [--rate 1000] [--seconds 10] [--rounds 4] [--query '?model=x']
 */
import { type ChildProcess, spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { cpuSeconds } from './proxy-cpu.js';
import { BODY, startProxyStack } from './proxy-bench.js';
import { rateLoad } from './rate-load.js';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Starts the tail readers; resolves once every tail is open. */
async function startReaders(baseUrl: string, key: string, tails: number, query: string) {
  const child: ChildProcess = spawn(
    process.execPath,
    [path.join(here, 'tail-readers.js'), baseUrl, key, String(tails), query],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  await new Promise<void>((resolve, reject) => {
    const check = setInterval(() => {
      if (out.includes('ready\n')) {
        clearInterval(check);
        resolve();
      }
    }, 20);
    child.once('exit', (code) => {
      clearInterval(check);
      reject(new Error(`tail readers exited with ${code}: ${out}`));
    });
  });
  return {
    /** Stops the readers; answers how many events they read and how many tails were still open. */
    stop: () =>
      new Promise<{ events: number; open: number }>((resolve) => {
        child.removeAllListeners('exit');
        child.once('exit', () => {
          const m = /events (\d+) open (\d+)/.exec(out);
          resolve({ events: Number(m?.[1] ?? 0), open: Number(m?.[2] ?? 0) });
        });
        child.kill('SIGTERM');
      }),
  };
}

export async function runTailCpuBench(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      tails: { type: 'string', default: '100' },
      rate: { type: 'string', default: '1000' },
      seconds: { type: 'string', default: '10' },
      rounds: { type: 'string', default: '4' },
      query: { type: 'string', default: '' },
    },
  });
  const tails = Number(values.tails);
  const rate = Number(values.rate);
  const seconds = Number(values.seconds);
  const stack = await startProxyStack();
  const headers = { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json' };
  const url = `${stack.gatelogUrl}/api/embeddings`;
  await rateLoad(url, headers, BODY, rate, 3); // Warm-up: JIT and connection pools.
  const without: number[] = [];
  const withTails: number[] = [];
  const rows: string[] = [];
  for (let round = 1; round <= Number(values.rounds); round++) {
    const cells: string[] = [];
    for (const tailed of round % 2 ? [false, true] : [true, false]) {
      const readers = tailed ? await startReaders(stack.gatelogUrl, stack.key, tails, values.query!) : null;
      // The tails' first poll and keepalive start: a moment before the round.
      if (readers) await new Promise((resolve) => setTimeout(resolve, 500));
      const before = cpuSeconds(stack.gatelogPid);
      const result = await rateLoad(url, headers, BODY, rate, seconds);
      const micros = ((cpuSeconds(stack.gatelogPid) - before) / result.ok) * 1e6;
      // The last logs of the round reach the tails.
      if (readers) await new Promise((resolve) => setTimeout(resolve, 1000));
      const read = readers ? await readers.stop() : null;
      (tailed ? withTails : without).push(micros);
      const seen = read ? `, ${read.events} events read, ${read.open}/${tails} tails open at the end` : '';
      cells.push(
        `${tailed ? `${tails} tails` : 'no tails'} ${micros.toFixed(1)} µs (${result.ok} calls, ${result.errors} errors${seen})`,
      );
    }
    rows.push(`| ${round} | ${cells.join(' | ')} |`);
    console.log(rows.at(-1));
  }
  await stack.stop();
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const [base, tailedCpu] = [median(without), median(withTails)];
  console.log(`
gatelog CPU per proxied call at ${rate} req/s, ${seconds} s rounds, ${os.cpus().length} cores, tails ${values.query || '(no filter)'}:
${rows.join('\n')}
median: no tails ${base.toFixed(1)} µs, ${tails} tails ${tailedCpu.toFixed(1)} µs: ${(((tailedCpu - base) / base) * 100).toFixed(1)}% ${tailedCpu >= base ? 'more' : 'less'}`);
}
