/**
 * Claude streams, translated and native: what gatelog adds to a streamed Claude answer when the caller
 * speaks Anthropic's Messages API (`POST /api/anthropic/v1/messages`, the provider's events passed on as
 * they came) and when it speaks OpenAI's (`POST /api/chat/completions` with a Claude model, each event
 * translated to a `chat.completion.chunk`). The fake provider (fake-upstream-server.ts, its own process)
 * streams Anthropic's events; gatelog (SQLite, logging on) has a provider `anthropic` pointing at it.
 * Three paths, interleaved in every round (the order turning each round, so that the machine's noisy
 * stretches fall on all alike): direct to the fake (the floor), native through gatelog, translated
 * through gatelog. Both gatelog paths send the same request upstream and read the same events.
 *
 * 1. Time to first content: `--concurrency` clients each loop (open a stream, read it to its last
 *    event) against a fake that waits `--first-ms` before its first events and `--every-ms` between
 *    text deltas. The time from opening a stream to its first text (a text_delta; a chunk's
 *    `delta.content`), p50 and p99, minus direct's in the same round: the added time.
 * 2. At saturation: a fake without delays, `--saturation-events` text deltas a stream,
 *    `--saturation-streams` clients; the text deltas delivered per second (streams read whole × deltas)
 *    and the CPU time of gatelog's process (/proc/PID/stat, all threads: the log writer included) per
 *    text delta. The other events of a stream (six natively, four translated) are counted too.
 *
 * Targets, as ratios within this run: the translated path's added time to first content (p50) within
 * 1.5× the native path's, and its CPU per event within 2× the native path's.
 *
 *   npm run bench -- claude-stream [--seconds 8] [--rounds 3] [--concurrency 100] [--first-ms 200]
 *     [--every-ms 40] [--events 40] [--saturation-events 200] [--saturation-streams 32]
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { startProxyStack } from './proxy-bench.js';
import {
  CHAT_CHUNKS,
  closedLoop,
  eventData,
  type LoopResult,
  median,
  ms,
  readStream,
  signed,
  type StreamDialect,
  type StreamPath,
  type StreamShape,
  ttftRound,
  turn,
  upstreamPeak,
} from './stream-load.js';

type PathName = 'direct' | 'native' | 'translated';

const MODEL = 'claude-sonnet-4-5';
const MESSAGES = [{ role: 'user', content: 'Say something about gateways.' }];

/** Anthropic's Messages body, direct and native alike. */
const messagesBody = (shape: StreamShape) =>
  JSON.stringify({ model: MODEL, max_tokens: 1024, messages: MESSAGES, stream: true, bench_stream: shape });

/**
 * The same call in OpenAI's shape. `bench_stream` is not an OpenAI field: the translation passes it on
 * to Claude unchanged, as any field it does not read (checked before measuring). The usage event is
 * asked for, as a client that reads usage would.
 */
const chatBody = (shape: StreamShape) =>
  JSON.stringify({
    model: MODEL,
    max_tokens: 1024,
    messages: MESSAGES,
    stream: true,
    stream_options: { include_usage: true },
    bench_stream: shape,
  });

/** Anthropic's events: content in a content_block_delta's text_delta, then `message_stop`. */
const ANTHROPIC_EVENTS: StreamDialect = {
  hasContent(event) {
    if (!event.startsWith('event: content_block_delta\n')) return false;
    const data = eventData(event) as { delta?: { type?: unknown; text?: unknown } } | undefined;
    return data?.delta?.type === 'text_delta' && typeof data.delta.text === 'string' && data.delta.text !== '';
  },
  last: 'event: message_stop\ndata: {"type":"message_stop"}\n\n',
};

/**
 * Each path's events besides the text deltas, from two streams of different lengths; throws when the
 * difference is not the difference of the deltas asked for — the shape did not reach the fake.
 */
async function eventsBesideText(path: StreamPath): Promise<number> {
  const read = async (events: number) => {
    const r = await readStream(path, path.body({ first_ms: 0, every_ms: 0, events }));
    if (!r.ok) throw new Error(`the ${path.name} path did not stream a whole answer`);
    return r.events;
  };
  const [short, long] = [await read(5), await read(9)];
  if (long - short !== 4) throw new Error(`bench_stream did not reach the fake through the ${path.name} path`);
  return short - 5;
}

export async function runClaudeStreamBench(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      seconds: { type: 'string', default: '8' },
      rounds: { type: 'string', default: '3' },
      concurrency: { type: 'string', default: '100' },
      'first-ms': { type: 'string', default: '200' },
      'every-ms': { type: 'string', default: '40' },
      events: { type: 'string', default: '40' },
      'saturation-events': { type: 'string', default: '200' },
      'saturation-streams': { type: 'string', default: '32' },
    },
  });
  const seconds = Number(values.seconds);
  const rounds = Number(values.rounds);
  const concurrency = Number(values.concurrency);
  const paced: StreamShape = {
    first_ms: Number(values['first-ms']),
    every_ms: Number(values['every-ms']),
    events: Number(values.events),
  };
  const streamMs = paced.first_ms + (paced.events - 1) * paced.every_ms;
  const saturated: StreamShape = { first_ms: 0, every_ms: 0, events: Number(values['saturation-events']) };
  const saturationStreams = Number(values['saturation-streams']);

  const stack = await startProxyStack(undefined, { anthropic: true });
  const fake = new URL(stack.fakeUrl);
  // Enough client connections for every stream at once: the client never queues a stream itself.
  const pool = (origin: string) =>
    new Pool(origin, { connections: Math.max(concurrency, saturationStreams) + 16, keepAliveTimeout: 60_000 });
  const json = { 'content-type': 'application/json' };
  const paths: StreamPath<PathName>[] = [
    {
      name: 'direct',
      path: `${fake.pathname}/messages`,
      headers: { ...json, 'x-api-key': 'sk-ant-bench', 'anthropic-version': '2023-06-01' },
      pool: pool(fake.origin),
      pid: stack.fakePid,
      dialect: ANTHROPIC_EVENTS,
      body: messagesBody,
    },
    {
      name: 'native',
      path: '/api/anthropic/v1/messages',
      headers: { ...json, 'x-api-key': stack.key, 'anthropic-version': '2023-06-01' },
      pool: pool(stack.gatelogUrl),
      pid: stack.gatelogPid,
      dialect: ANTHROPIC_EVENTS,
      body: messagesBody,
    },
    {
      name: 'translated',
      path: '/api/chat/completions',
      headers: { ...json, authorization: `Bearer ${stack.key}` },
      pool: pool(stack.gatelogUrl),
      pid: stack.gatelogPid,
      dialect: CHAT_CHUNKS,
      body: chatBody,
    },
  ];
  /** Streams read whole through gatelog, either path, checks and warm-up included: each must have its log. */
  let gatelogOk = 0;
  let gatelogErrors = 0;
  const run = async (...args: Parameters<typeof closedLoop>) => {
    const result = await closedLoop(...args);
    if (args[0].name !== 'direct') {
      gatelogOk += result.streams;
      gatelogErrors += result.errors;
    }
    return result;
  };

  let text = '';
  try {
    const beside = {} as Record<PathName, number>;
    for (const path of paths) {
      beside[path.name] = await eventsBesideText(path);
      if (path.name !== 'direct') gatelogOk += 2;
    }
    // Warm-up: JIT, connections, gatelog's first-call caches; paced streams, then saturation.
    for (const path of paths) {
      const a = await run(path, paced, concurrency, { seconds: (2 * streamMs) / 1000 + 1 }, streamMs);
      const b = await run(path, saturated, saturationStreams, { seconds: 2 }, 0);
      console.log(`warm-up ${path.name}: ${a.streams + b.streams} streams, ${a.errors + b.errors} errors`);
    }
    await upstreamPeak(fake);
    await sleep(2000);

    // 1. Time to first content.
    const ttftRows: string[] = [];
    const added: Record<'native' | 'translated', { p50: number; p99: number }[]> = { native: [], translated: [] };
    for (let round = 1; round <= rounds; round++) {
      const by = await ttftRound(
        paths,
        round,
        (path) => run(path, paced, concurrency, { seconds }, streamMs),
        () => upstreamPeak(fake),
      );
      const d = by.get('direct')!;
      const n = by.get('native')!;
      const t = by.get('translated')!;
      added.native.push({ p50: n.p50 - d.p50, p99: n.p99 - d.p99 });
      added.translated.push({ p50: t.p50 - d.p50, p99: t.p99 - d.p99 });
      ttftRows.push(
        `| ${round} | ${ms(d.p50)} / ${ms(d.p99)} | ${ms(n.p50)} / ${ms(n.p99)} | ${ms(t.p50)} / ${ms(t.p99)} | ` +
          `${signed(n.p50 - d.p50)} / ${signed(n.p99 - d.p99)} | ${signed(t.p50 - d.p50)} / ${signed(t.p99 - d.p99)} | ` +
          `${d.n} / ${n.n} / ${t.n} | ${d.peak} / ${n.peak} / ${t.peak} | ${d.errors + n.errors + t.errors} |`,
      );
      console.log(ttftRows.at(-1));
    }

    // 2. At saturation: text deltas per second, and CPU per text delta of the process in the middle.
    const rateRows: string[] = [];
    const deltaRates: Record<PathName, number[]> = { direct: [], native: [], translated: [] };
    const cpuPerDelta: Record<PathName, number[]> = { direct: [], native: [], translated: [] };
    const cpuRatios: number[] = [];
    for (let round = 1; round <= rounds; round++) {
      const by = new Map<PathName, LoopResult>();
      for (const path of turn(paths, round)) {
        const r = await run(path, saturated, saturationStreams, { seconds }, 0);
        by.set(path.name, r);
        const deltas = r.streams * saturated.events;
        deltaRates[path.name].push(deltas / r.seconds);
        cpuPerDelta[path.name].push((r.cpu / deltas) * 1e6);
      }
      const rate = (name: PathName) => deltaRates[name].at(-1)!.toFixed(0);
      const received = (name: PathName) => (by.get(name)!.events / by.get(name)!.seconds).toFixed(0);
      const cpu = (name: PathName) => cpuPerDelta[name].at(-1)!.toFixed(1);
      cpuRatios.push(cpuPerDelta.translated.at(-1)! / cpuPerDelta.native.at(-1)!);
      rateRows.push(
        `| ${round} | ${rate('direct')} | ${rate('native')} | ${rate('translated')} | ` +
          `${received('direct')} / ${received('native')} / ${received('translated')} | ` +
          `${cpu('direct')} | ${cpu('native')} | ${cpu('translated')} | ${cpuRatios.at(-1)!.toFixed(2)}× | ` +
          `${[...by.values()].reduce((e, r) => e + r.errors, 0)} |`,
      );
      console.log(rateRows.at(-1));
    }

    const verdict = (met: boolean) => (met ? 'met' : 'MISSED');
    const native50 = median(added.native.map((a) => a.p50));
    const native99 = median(added.native.map((a) => a.p99));
    const translated50 = median(added.translated.map((a) => a.p50));
    const translated99 = median(added.translated.map((a) => a.p99));
    const nativeCpu = median(cpuPerDelta.native);
    const translatedCpu = median(cpuPerDelta.translated);
    text = `
Claude streams, ${seconds} s runs, ${rounds} rounds, paths interleaved (order turning each round).
Paced streams: ${paced.first_ms} ms to the first events, ${paced.every_ms} ms between text deltas, ${paced.events} text deltas (~${streamMs} ms a stream), ${concurrency} streams at once; saturation: ${saturated.events} text deltas a stream without delays, ${saturationStreams} streams at once.
Events a stream besides its text deltas: direct ${beside.direct}, native ${beside.native}, translated ${beside.translated}.

Time to first content (ms, p50 / p99; added = path − direct in the same round):
| round | direct | native | translated | native added | translated added | samples (d / n / t) | streams open at the fake (d / n / t) | errors |
|---|---|---|---|---|---|---|---|---|
${ttftRows.join('\n')}

At saturation: text deltas per second delivered (streams read whole × deltas), all events received per second, CPU µs per text delta of the process in the middle (direct: the fake's own):
| round | direct deltas/s | native deltas/s | translated deltas/s | events/s received (d / n / t) | direct µs | native µs | translated µs | translated ÷ native CPU | errors |
|---|---|---|---|---|---|---|---|---|---|
${rateRows.join('\n')}

| measure (median of ${rounds} rounds) | native | translated | translated ÷ native |
|---|---|---|---|
| added time to first content, p50 / p99 (ms) | ${signed(native50)} / ${signed(native99)} | ${signed(translated50)} / ${signed(translated99)} | ${(translated50 / native50).toFixed(2)}× (p50) |
| text deltas/s at saturation (direct ${median(deltaRates.direct).toFixed(0)}) | ${median(deltaRates.native).toFixed(0)} | ${median(deltaRates.translated).toFixed(0)} | ${(median(deltaRates.translated) / median(deltaRates.native)).toFixed(2)}× |
| gatelog CPU µs per text delta (the fake's own: ${median(cpuPerDelta.direct).toFixed(1)}) | ${nativeCpu.toFixed(1)} | ${translatedCpu.toFixed(1)} | ${(translatedCpu / nativeCpu).toFixed(2)}× (rounds' median ${median(cpuRatios).toFixed(2)}×) |

| target | measured | |
|---|---|---|
| translated added p50 ≤ 1.5 × native added p50 | ${ms(translated50)} ms vs 1.5 × ${ms(native50)} = ${ms(1.5 * native50)} ms | ${verdict(translated50 <= 1.5 * native50)} |
| translated CPU per event ≤ 2 × native's | ${translatedCpu.toFixed(1)} µs vs 2 × ${nativeCpu.toFixed(1)} = ${(2 * nativeCpu).toFixed(1)} µs | ${verdict(translatedCpu <= 2 * nativeCpu)} |`;
  } finally {
    await Promise.all(paths.map((p) => p.pool.close()));
    const logs = await stack.stop();
    text += `\nlogs stored: ${logs} for ${gatelogOk} streams read whole through gatelog, native and translated (${gatelogErrors} failed): ${
      logs >= gatelogOk && logs <= gatelogOk + gatelogErrors ? 'every stream logged' : 'MISMATCH'
    }`;
    console.log(text);
  }
}
