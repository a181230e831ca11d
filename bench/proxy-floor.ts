/**
 * The ceiling of the proxy-throughput target on this machine: maximum throughput at 64 connections
 * direct to the fake upstream, and through the minimal Node proxy (minimal-proxy-server.ts), runs
 * interleaved. The minimal proxy does strictly less than gatelog, so its share of direct bounds
 * gatelog's.
 *
 *   npm run bench -- proxy-floor [--seconds 8] [--rounds 2]
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { BODY, firstLine } from './proxy-bench.js';

const here = path.dirname(fileURLToPath(import.meta.url));

export async function runProxyFloorBench(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { seconds: { type: 'string', default: '8' }, rounds: { type: 'string', default: '2' } },
  });
  const fake = spawn(process.execPath, [path.join(here, 'fake-upstream-server.js')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const fakeUrl = await firstLine(fake);
  const proxy = spawn(process.execPath, [path.join(here, 'minimal-proxy-server.js'), new URL(fakeUrl).origin], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const proxyUrl = await firstLine(proxy);
  const run = async (url: string) =>
    (
      await autocannon({
        url,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: BODY,
        connections: 64,
        duration: Number(values.seconds),
      })
    ).requests.average;
  try {
    for (let i = 0; i < Number(values.rounds); i++) {
      const direct = await run(`${fakeUrl}/embeddings`);
      const proxied = await run(`${proxyUrl}/embeddings`);
      console.log(
        `direct ${direct.toFixed(0)} req/s, minimal Node proxy ${proxied.toFixed(0)} req/s (${((100 * proxied) / direct).toFixed(0)}% of direct)`,
      );
    }
  } finally {
    fake.kill();
    proxy.kill();
  }
}
