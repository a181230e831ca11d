/**
 * The ceiling of the proxy-throughput target on this machine: maximum throughput at 64 connections
 * direct to the fake upstream, and through the minimal Node proxy (minimal-proxy-server.ts), runs
 * interleaved. The minimal proxy does strictly less than gatelog, so its share of direct bounds
 * gatelog's.
 *
 * `--load wrk` drives the load with wrk (Debian package `wrk`) instead of autocannon: a C load generator
 * leaves more of the two cores to the servers, which raises the direct rate more than the proxied one.
 *
 *   npm run bench -- proxy-floor [--seconds 8] [--rounds 2] [--load autocannon|wrk]
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { BODY, load, startServer } from './proxy-bench.js';
import { MEASURE, record } from './summary.js';

export async function runProxyFloorBench(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      seconds: { type: 'string', default: '8' },
      rounds: { type: 'string', default: '2' },
      load: { type: 'string', default: 'autocannon' },
    },
  });
  const { child: fake, url: fakeUrl } = await startServer('fake-upstream-server.js');
  const { child: proxy, url: proxyUrl } = await startServer('minimal-proxy-server.js', [new URL(fakeUrl).origin]);
  const autocannonRun = async (url: string) => (await load(url, null, Number(values.seconds), 64)).rps;
  const script = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gatelog-wrk-')), 'post.lua');
  fs.writeFileSync(
    script,
    `wrk.method = "POST"\nwrk.body = '${BODY}'\nwrk.headers["Content-Type"] = "application/json"\n`,
  );
  const wrkRun = async (url: string) => {
    const out = execFileSync('wrk', ['-t1', '-c64', `-d${values.seconds}s`, '-s', script, url]).toString();
    return Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0);
  };
  const run = values.load === 'wrk' ? wrkRun : autocannonRun;
  const floors: number[] = [];
  try {
    for (let i = 0; i < Number(values.rounds); i++) {
      const direct = await run(`${fakeUrl}/embeddings`);
      const proxied = await run(`${proxyUrl}/embeddings`);
      floors.push(proxied);
      console.log(
        `${values.load}: direct ${direct.toFixed(0)} req/s, minimal Node proxy ${proxied.toFixed(0)} req/s (${((100 * proxied) / direct).toFixed(0)}% of direct)`,
      );
    }
  } finally {
    fake.kill();
    proxy.kill();
  }
  // The best round: the floor is what a minimal proxy can reach here.
  record('proxy-floor', '-', MEASURE.floor, Math.max(...floors), 'req/s');
}
