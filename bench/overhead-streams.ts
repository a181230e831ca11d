/**
 * The stream phases of the overhead bench (overhead-bench.ts), on the same paths (all but the reading floor):
 * 1. Time to first content at 10 streams at once (the fake waits 20 ms, then 8 events 5 ms apart):
 *    gatelog's p50 / p99 minus direct's in the same round. Targets: ≤ 1 ms p50, ≤ 2 ms p99.
 * 2. CPU per streamed event at saturation (no delays, 200 events a stream, 32 streams): the process in
 *    the middle's CPU time over the events its clients received. Target: gatelog ≤ 1.3× the floor's.
 *    The logging floor (minimal-logging-proxy.ts) shows what parsing each event and logging the stream
 *    cost at least.
 * 3. Paced streams, 64 deltas 20 ms apart, held at each level (128, 256, 512 streams at once) for
 *    `pacedSeconds`: each stream's longest gap between two chunks; a stall is a gap over 200 ms. gatelog's
 *    resident memory sampled during each level (its plateau), and 10 s after the last (its recovery).
 *    Target: no stall at 512.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { rssMb } from './gatelog-process.js';
import type { OverheadPath } from './overhead-bench.js';
import { verdict } from './overhead-bench.js';
import {
  CHAT_CHUNKS,
  chatStreamBody,
  closedLoop,
  median,
  pct,
  type StreamPath,
  type StreamShape,
  turn,
} from './stream-load.js';

const STALL_MS = 200;

const plus = (v: number) => `${v >= 0 ? '+' : ''}${v.toFixed(2)}`;

export async function runStreamPhases(
  paths: OverheadPath[],
  rounds: number,
  levels: number[],
  pacedSeconds: number,
): Promise<string> {
  const connections = Math.max(...levels, 32) + 16;
  const streamPaths: StreamPath<OverheadPath['name']>[] = paths.map((p) => ({
    name: p.name,
    path: `${p.prefix}/chat/completions`,
    headers: p.headers,
    pool: new Pool(p.origin, { connections, keepAliveTimeout: 60_000 }),
    pid: p.pid,
    dialect: CHAT_CHUNKS,
    body: chatStreamBody,
  }));
  const gatelog = paths.find((p) => p.name === 'gatelog')!;
  const out: string[] = [];
  try {
    const short: StreamShape = { first_ms: 20, every_ms: 5, events: 8 };
    const shortMs = short.first_ms + short.events * short.every_ms;
    const saturated: StreamShape = { first_ms: 0, every_ms: 0, events: 200 };
    for (const p of streamPaths) {
      await closedLoop(p, short, 10, { seconds: 2 }, shortMs);
      await closedLoop(p, saturated, 32, { seconds: 2 }, 0);
    }

    // 1. Time to first content at 10 streams.
    const ttft = new Map(streamPaths.map((p) => [p.name, { p50: [] as number[], p99: [] as number[] }]));
    for (let round = 1; round <= rounds; round++) {
      for (const p of turn(streamPaths, round)) {
        const r = await closedLoop(p, short, 10, { seconds: 8 }, shortMs);
        ttft.get(p.name)!.p50.push(pct(r.ttfts, 50));
        ttft.get(p.name)!.p99.push(pct(r.ttfts, 99));
      }
    }
    const added = (name: OverheadPath['name'], key: 'p50' | 'p99') =>
      median(ttft.get(name)![key]) - median(ttft.get('direct')![key]);
    out.push(
      `### Streams: time to first content at 10 streams (median of ${rounds} rounds)`,
      '',
      '| path | added p50 ms | added p99 ms |',
      '|---|---|---|',
      `| floor | ${plus(added('floor', 'p50'))} | ${plus(added('floor', 'p99'))} |`,
      `| logging floor | ${plus(added('logging', 'p50'))} | ${plus(added('logging', 'p99'))} |`,
      `| gatelog | ${plus(added('gatelog', 'p50'))} ${verdict(added('gatelog', 'p50') <= 1)} | ${plus(added('gatelog', 'p99'))} ${verdict(added('gatelog', 'p99') <= 2)} |`,
    );

    // 2. CPU per streamed event at saturation.
    const perEvent = new Map(streamPaths.map((p) => [p.name, [] as number[]]));
    const rate = new Map(streamPaths.map((p) => [p.name, [] as number[]]));
    for (let round = 1; round <= rounds; round++) {
      for (const p of turn(streamPaths, round)) {
        const r = await closedLoop(p, saturated, 32, { seconds: 8 }, 0);
        perEvent.get(p.name)!.push((r.cpu / r.events) * 1e6);
        rate.get(p.name)!.push(r.events / r.seconds);
      }
    }
    const cpu = (name: OverheadPath['name']) => median(perEvent.get(name)!);
    const ratio = cpu('gatelog') / cpu('floor');
    out.push(
      '',
      '### Streams at saturation (32 streams of 200 events, no delays)',
      '',
      '| path | events/s | CPU µs per event |',
      '|---|---|---|',
      ...streamPaths.map(
        (p) =>
          `| ${p.name} | ${median(rate.get(p.name)!).toFixed(0)} | ${cpu(p.name).toFixed(1)}${p.name === 'gatelog' ? ` (${ratio.toFixed(2)}× the floor's, ≤ 1.3×: ${verdict(ratio <= 1.3)}; ${(cpu('gatelog') / cpu('logging')).toFixed(2)}× the logging floor's)` : ''}${p.name === 'logging' ? ` (${(cpu('logging') / cpu('floor')).toFixed(2)}× the floor's)` : ''} |`,
      ),
    );

    // 3. Paced streams held at each level; gatelog's memory.
    const paced: StreamShape = { first_ms: 0, every_ms: 20, events: 64 };
    const pacedMs = paced.events * paced.every_ms;
    const rssBefore = rssMb(gatelog.pid);
    out.push(
      '',
      `### Paced streams (64 deltas 20 ms apart, ${pacedSeconds} s a level); a stall is a gap over ${STALL_MS} ms`,
      '',
      '| streams at once | path | streams read | errors | gap p50 / p99 / max ms | stalls | gatelog RSS plateau MB |',
      '|---|---|---|---|---|---|---|',
    );
    let stallsAtTop = 0;
    for (const level of levels) {
      for (const p of turn(streamPaths, level)) {
        let plateau = 0;
        const sampler = setInterval(() => (plateau = Math.max(plateau, rssMb(gatelog.pid))), 250);
        const r = await closedLoop(p, paced, level, { seconds: pacedSeconds }, pacedMs);
        clearInterval(sampler);
        const stalls = r.maxGaps.filter((g) => g > STALL_MS).length;
        if (level === Math.max(...levels) && p.name === 'gatelog') stallsAtTop = stalls;
        const gaps = `${pct(r.maxGaps, 50).toFixed(1)} / ${pct(r.maxGaps, 99).toFixed(1)} / ${Math.max(0, ...r.maxGaps).toFixed(1)}`;
        out.push(
          `| ${level} | ${p.name} | ${r.streams} | ${r.errors} | ${gaps} | ${stalls} | ${p.name === 'gatelog' ? plateau.toFixed(0) : ''} |`,
        );
        console.log(out.at(-1));
      }
    }
    await sleep(10_000);
    out.push(
      '',
      `Stalls at ${Math.max(...levels)} streams through gatelog: ${stallsAtTop} (${verdict(stallsAtTop === 0)}). gatelog RSS before the paced streams ${rssBefore.toFixed(0)} MB, 10 s after them ${rssMb(gatelog.pid).toFixed(0)} MB.`,
    );
  } finally {
    for (const p of streamPaths) await p.pool.close();
  }
  return out.join('\n');
}
