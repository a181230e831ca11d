/**
 * Streamed chat completions (`POST /api/chat/completions` with `stream: true`): what gatelog adds to a
 * stream, against a do-nothing Node pass-through (minimal-stream-proxy.ts) on the same fake provider
 * (fake-upstream-server.ts, its own process), all on 127.0.0.1. Three paths, interleaved in every round
 * (the order turns each round, so that the machine's noisy stretches fall on all alike):
 * direct to the fake, through the pass-through, through `gatelog serve` (SQLite, logging on).
 *
 * 1. Time to first content: N clients each loop (open a stream, read it to `[DONE]`) against a fake
 *    that waits `--first-ms` before its first event and `--every-ms` between events. The time from
 *    opening a stream to its first `delta.content`, p50 and p99, minus direct's in the same round:
 *    the added time, at 100 and 500 streams at once.
 * 2. Events per second at saturation: a fake without delays, `--saturation-events` events a stream,
 *    `--saturation-streams` clients; the events the clients receive per second, and the CPU time of the
 *    process in the middle (/proc/PID/stat, all its threads: gatelog's log writer included) per event.
 * 3. Memory: gatelog's RSS after `--streams` streams (counted from the end of the warm-up; the other
 *    phases' streams count, the rest run at the end) against its RSS after the warm-up, and its V8 heap
 *    after a full collection at both points (heap-probe.ts): memory kept, apart from garbage not yet
 *    collected. `--checkpoint N`: the same figures every N streams of the rest. `--memory-only`: only
 *    gatelog warmed up, phases 1 and 2 left out.
 *
 * Targets, as ratios within this run: gatelog's added time to first content (p50) within 1.5× the
 * pass-through's and at most 2 ms; gatelog's events per second at least half the pass-through's.
 *
 *   npm run bench -- chat-stream [--seconds 8] [--rounds 3] [--streams 50000] [--first-ms 200]
 *     [--every-ms 40] [--events 40] [--saturation-events 200] [--saturation-streams 32]
 *     [--proxy-connections N] [--memory-only] [--checkpoint N]
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { rssMb } from './gatelog-process.js';
import { heapAfterGc, type HeapFigures, heapProbeArgs, removeHeapProbeFiles } from './heap-probe.js';
import { startProxyStack, startServer } from './proxy-bench.js';
import {
  CHAT_CHUNKS,
  chatStreamBody,
  closedLoop,
  type LoopResult,
  median,
  ms,
  signed,
  type StreamPath,
  type StreamShape,
  ttftRound,
  turn,
  upstreamPeak as peakAt,
} from './stream-load.js';

type PathName = 'direct' | 'pass-through' | 'gatelog';

/** gatelog's memory after `streams` streams since the warm-up, settled. */
interface MemoryRow {
  streams: number;
  rss: number;
  anon: number;
  heap: HeapFigures;
  /** RssAnon once the heaps are collected: what the collection gave back is garbage, not kept memory. */
  anonAfterGc: number;
}
const memoryRow = (r: MemoryRow) => {
  const [main, ...workers] = r.heap.threads;
  const mb = (n: number) => n.toFixed(1);
  return `| ${r.streams} | ${r.rss.toFixed(0)} | ${r.anon.toFixed(0)} | ${r.anonAfterGc.toFixed(0)} | ${mb(main.heapUsedMb)} | ${workers.map((w) => mb(w.heapUsedMb)).join(' + ')} | ${mb(r.heap.heapUsedMb)} | ${mb(r.heap.heapTotalMb)} | ${mb(r.heap.externalMb)} |`;
};

const body = chatStreamBody;

export async function runChatStreamBench(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      seconds: { type: 'string', default: '8' },
      rounds: { type: 'string', default: '3' },
      streams: { type: 'string', default: '50000' },
      'first-ms': { type: 'string', default: '200' },
      'every-ms': { type: 'string', default: '40' },
      events: { type: 'string', default: '40' },
      'saturation-events': { type: 'string', default: '200' },
      'saturation-streams': { type: 'string', default: '32' },
      // Bounds the pass-through's upstream connections (e.g. 256, gatelog's own bound); unbounded by default.
      'proxy-connections': { type: 'string' },
      'memory-only': { type: 'boolean', default: false },
      checkpoint: { type: 'string', default: '0' },
    },
  });
  const seconds = Number(values.seconds);
  const rounds = Number(values.rounds);
  const targetStreams = Number(values.streams);
  const paced: StreamShape = {
    first_ms: Number(values['first-ms']),
    every_ms: Number(values['every-ms']),
    events: Number(values.events),
  };
  const streamMs = paced.first_ms + (paced.events - 1) * paced.every_ms;
  const saturated: StreamShape = { first_ms: 0, every_ms: 0, events: Number(values['saturation-events']) };
  const saturationStreams = Number(values['saturation-streams']);
  const concurrencies = [100, 500];
  const memoryOnly = values['memory-only'];
  const checkpoint = Number(values.checkpoint);

  const stack = await startProxyStack(undefined, { nodeArgs: heapProbeArgs() });
  const fake = new URL(stack.fakeUrl);
  const { child: proxy, url: proxyUrl } = await startServer('minimal-stream-proxy.js', [
    stack.fakeUrl,
    ...(values['proxy-connections'] ? [values['proxy-connections']] : []),
  ]);
  // Enough client connections for every stream at once: the client never queues a stream itself.
  const pool = (origin: string) =>
    new Pool(origin, { connections: Math.max(...concurrencies) + 16, keepAliveTimeout: 60_000 });
  const json = { 'content-type': 'application/json' };
  const paths: StreamPath<PathName>[] = [
    {
      name: 'direct',
      path: `${fake.pathname}/chat/completions`,
      headers: json,
      pool: pool(fake.origin),
      pid: stack.fakePid,
      dialect: CHAT_CHUNKS,
      body,
    },
    {
      name: 'pass-through',
      path: '/chat/completions',
      headers: json,
      pool: pool(proxyUrl),
      pid: proxy.pid!,
      dialect: CHAT_CHUNKS,
      body,
    },
    {
      name: 'gatelog',
      path: '/api/chat/completions',
      headers: { ...json, authorization: `Bearer ${stack.key}` },
      pool: pool(stack.gatelogUrl),
      pid: stack.gatelogPid,
      dialect: CHAT_CHUNKS,
      body,
    },
  ];
  const gatelog = paths[2];
  /** Streams open at the fake at once during the last run (then reset): a bound on upstream connections shows. */
  const upstreamPeak = () => peakAt(fake);
  let peakRss = 0;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMb(stack.gatelogPid))), 500);
  /** gatelog's streams answered whole, warm-up included (each must have its log), and since the warm-up. */
  let gatelogOk = 0;
  let sinceWarm = 0;
  let gatelogErrors = 0;
  const run = async (...args: Parameters<typeof closedLoop>) => {
    const result = await closedLoop(...args);
    if (args[0] === gatelog) {
      gatelogOk += result.streams;
      sinceWarm += result.streams;
      gatelogErrors += result.errors;
    }
    return result;
  };

  let text = '';
  try {
    // Warm-up: JIT, connections, gatelog's first-call caches; paced streams, then saturation.
    for (const path of memoryOnly ? [gatelog] : paths) {
      const a = await run(path, paced, 100, { seconds: (2 * streamMs) / 1000 + 1 }, streamMs);
      const b = await run(path, saturated, saturationStreams, { seconds: 2 }, 0);
      console.log(`warm-up ${path.name}: ${a.streams + b.streams} streams, ${a.errors + b.errors} errors`);
    }
    await upstreamPeak();
    /** gatelog's memory now: settled (the last logs written, the streams' timers gone), then collected. */
    const memoryAt = async (): Promise<MemoryRow> => {
      await sleep(2000);
      const rss = rssMb(stack.gatelogPid);
      // Without the pages of the SQLite file it maps: the file grows with every stream's log.
      const anon = rssMb(stack.gatelogPid, 'RssAnon');
      const heap = await heapAfterGc(stack.gatelogPid);
      return { streams: sinceWarm, rss, anon, heap, anonAfterGc: rssMb(stack.gatelogPid, 'RssAnon') };
    };
    const warm = { ...(await memoryAt()), streams: 0 };
    const warmRss = warm.rss;
    const warmAnon = warm.anon;
    sinceWarm = 0;

    /** Phases 1 and 2, and their targets: the report's text. */
    const timePaths = async (): Promise<string> => {
      // 1. Time to first content.
      const ttftRows: string[] = [];
      const added: Record<number, { pass: { p50: number; p99: number }[]; gatelog: { p50: number; p99: number }[] }> =
        {};
      for (const concurrency of concurrencies) {
        added[concurrency] = { pass: [], gatelog: [] };
        for (let round = 1; round <= rounds; round++) {
          const by = await ttftRound(
            paths,
            round,
            (path) => run(path, paced, concurrency, { seconds }, streamMs),
            upstreamPeak,
          );
          const d = by.get('direct')!;
          const p = by.get('pass-through')!;
          const g = by.get('gatelog')!;
          added[concurrency].pass.push({ p50: p.p50 - d.p50, p99: p.p99 - d.p99 });
          added[concurrency].gatelog.push({ p50: g.p50 - d.p50, p99: g.p99 - d.p99 });
          ttftRows.push(
            `| ${concurrency} | ${round} | ${ms(d.p50)} / ${ms(d.p99)} | ${ms(p.p50)} / ${ms(p.p99)} | ` +
              `${ms(g.p50)} / ${ms(g.p99)} | ${signed(p.p50 - d.p50)} / ${signed(p.p99 - d.p99)} | ` +
              `${signed(g.p50 - d.p50)} / ${signed(g.p99 - d.p99)} | ${d.n} / ${p.n} / ${g.n} | ` +
              `${d.peak} / ${p.peak} / ${g.peak} | ${d.errors + p.errors + g.errors} |`,
          );
          console.log(ttftRows.at(-1));
        }
      }

      // 2. Events per second at saturation, and CPU per event of the process in the middle.
      const rateRows: string[] = [];
      const ratios: number[] = [];
      const cpuPerEvent: Record<PathName, number[]> = { direct: [], 'pass-through': [], gatelog: [] };
      const eventRates: Record<PathName, number[]> = { direct: [], 'pass-through': [], gatelog: [] };
      for (let round = 1; round <= rounds; round++) {
        const by = new Map<PathName, LoopResult>();
        for (const path of turn(paths, round)) {
          const r = await run(path, saturated, saturationStreams, { seconds }, 0);
          by.set(path.name, r);
          eventRates[path.name].push(r.events / r.seconds);
          cpuPerEvent[path.name].push((r.cpu / r.events) * 1e6);
        }
        const rate = (name: PathName) => by.get(name)!.events / by.get(name)!.seconds;
        const cpu = (name: PathName) => ((by.get(name)!.cpu / by.get(name)!.events) * 1e6).toFixed(1);
        ratios.push(rate('gatelog') / rate('pass-through'));
        rateRows.push(
          `| ${round} | ${rate('direct').toFixed(0)} | ${rate('pass-through').toFixed(0)} | ${rate('gatelog').toFixed(0)} | ` +
            `${ratios.at(-1)!.toFixed(2)}× | ${cpu('direct')} | ${cpu('pass-through')} | ${cpu('gatelog')} | ` +
            `${[...by.values()].reduce((n, r) => n + r.errors, 0)} |`,
        );
        console.log(rateRows.at(-1));
      }

      const verdict = (met: boolean) => (met ? 'met' : 'MISSED');
      const targetRows: string[] = [];
      const summaryRows: string[] = [];
      for (const concurrency of concurrencies) {
        const pass = median(added[concurrency].pass.map((a) => a.p50));
        const g50 = median(added[concurrency].gatelog.map((a) => a.p50));
        const g99 = median(added[concurrency].gatelog.map((a) => a.p99));
        const pass99 = median(added[concurrency].pass.map((a) => a.p99));
        summaryRows.push(
          `| added time to first content, ${concurrency} streams (median of ${rounds}) | ${signed(pass)} / ${signed(pass99)} ms | ${signed(g50)} / ${signed(g99)} ms |`,
        );
        targetRows.push(
          `| gatelog's added p50 ≤ 1.5 × the pass-through's, ${concurrency} streams | ${ms(g50)} ms vs 1.5 × ${ms(pass)} = ${ms(1.5 * pass)} ms | ${verdict(g50 <= 1.5 * pass)} |`,
          `| gatelog's added p50 ≤ 2 ms, ${concurrency} streams | ${ms(g50)} ms | ${verdict(g50 <= 2)} |`,
        );
      }
      const ratio = median(ratios);
      summaryRows.push(
        `| events/s at saturation (median of ${rounds}; direct ${median(eventRates.direct).toFixed(0)}) | ${median(eventRates['pass-through']).toFixed(0)} | ${median(eventRates.gatelog).toFixed(0)} |`,
        `| CPU per event, µs (median; the fake's own, direct: ${median(cpuPerEvent.direct).toFixed(1)}) | ${median(cpuPerEvent['pass-through']).toFixed(1)} | ${median(cpuPerEvent.gatelog).toFixed(1)} |`,
      );
      targetRows.push(
        `| gatelog's events/s ≥ 0.5 × the pass-through's | ${ratio.toFixed(2)}× | ${verdict(ratio >= 0.5)} |`,
      );
      return `
Streamed chat completions, ${seconds} s runs, ${rounds} rounds, paths interleaved (order turning each round).
Paced streams: ${paced.first_ms} ms to the first event, ${paced.every_ms} ms between events, ${paced.events} content events (~${streamMs} ms a stream); saturation: ${saturated.events} events a stream without delays, ${saturationStreams} streams at once.

Time to first content (ms, p50 / p99; added = path − direct in the same round):
| streams | round | direct | pass-through | gatelog | pass-through added | gatelog added | samples (d / p / g) | streams open at the fake (d / p / g) | errors |
|---|---|---|---|---|---|---|---|---|---|
${ttftRows.join('\n')}

Events per second at saturation (received by the clients), CPU µs per event of the process in the middle (direct: the fake):
| round | direct ev/s | pass-through ev/s | gatelog ev/s | gatelog ÷ pass-through | direct µs/ev | pass-through µs/ev | gatelog µs/ev | errors |
|---|---|---|---|---|---|---|---|---|
${rateRows.join('\n')}

| measure | pass-through | gatelog |
|---|---|---|
${summaryRows.join('\n')}

| target | measured | |
|---|---|---|
${targetRows.join('\n')}
`;
    };
    const timed = memoryOnly ? '' : await timePaths();

    // 3. Memory after `--streams` streams through gatelog: the rest of them now, at saturation.
    // With --checkpoint, in parts, gatelog's memory taken after each.
    const memoryRows = [warm];
    const started = performance.now();
    for (let rest = targetStreams - sinceWarm; rest > 0; rest = targetStreams - sinceWarm) {
      // Up to the next multiple of --checkpoint: the other phases' streams count too.
      const part = checkpoint > 0 ? Math.min(checkpoint - (sinceWarm % checkpoint), rest) : rest;
      const before = sinceWarm;
      await run(gatelog, { first_ms: 0, every_ms: 0, events: 20 }, saturationStreams, { streams: part }, 0);
      // A gatelog that fails every stream must not keep this loop going.
      if (sinceWarm === before) throw new Error('gatelog answered none of the streams');
      if (checkpoint > 0 && targetStreams - sinceWarm > 0) {
        memoryRows.push(await memoryAt());
        console.log(memoryRow(memoryRows.at(-1)!));
      }
    }
    console.log(`streams through gatelog up to ${sinceWarm} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    const after = await memoryAt();
    if (memoryRows.at(-1)!.streams !== after.streams) memoryRows.push(after);
    const { rss: afterRss, anon: afterAnon } = after;
    const heapGrowth = after.heap.heapUsedMb - warm.heap.heapUsedMb;

    text = `${timed}
gatelog RSS: ${warmRss.toFixed(0)} MB after warm-up, ${afterRss.toFixed(0)} MB after ${sinceWarm} more streams (${signed(afterRss - warmRss)} MB, ${((100 * (afterRss - warmRss)) / warmRss).toFixed(0)}%); its own memory (RssAnon, without mapped database pages) ${warmAnon.toFixed(0)} → ${afterAnon.toFixed(0)} MB (${signed(afterAnon - warmAnon)} MB); peak RSS ${peakRss.toFixed(0)} MB
V8 heaps used after a full collection, all threads: ${warm.heap.heapUsedMb.toFixed(1)} → ${after.heap.heapUsedMb.toFixed(1)} MB (${signed(heapGrowth)} MB, ${((heapGrowth * 1024 * 1024) / Math.max(1, sinceWarm)).toFixed(0)} bytes a stream)

| streams since warm-up | RSS MB | RssAnon MB | RssAnon after GC, MB | main thread's heap after GC, MB | worker threads' heaps after GC, MB | all heaps, MB | heaps reserved, MB | external, MB |
|---|---|---|---|---|---|---|---|---|
${memoryRows.map(memoryRow).join('\n')}
`;
  } finally {
    clearInterval(sampler);
    await Promise.all(paths.map((p) => p.pool.close()));
    proxy.kill();
    const logs = await stack.stop();
    removeHeapProbeFiles(stack.gatelogPid);
    text += `\nlogs stored: ${logs} for ${gatelogOk} streams read whole through gatelog (${gatelogErrors} failed): ${
      logs >= gatelogOk && logs <= gatelogOk + gatelogErrors ? 'every stream logged' : 'MISMATCH'
    }`;
    console.log(text);
  }
}
