/**
 * Closed-loop clients of streamed answers, shared by the streaming benchmarks (chat-stream-bench.ts,
 * claude-stream-bench.ts): each client opens a stream, reads it to its last event, and opens the next;
 * the time to the first content, the events received and the CPU time of the process in the middle are
 * kept. A path says how its stream looks (its dialect) and how to ask for a stream of a given shape.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type Pool, request } from 'undici';
import { percentile } from './bench-store.js';
import { cpuSeconds } from './proxy-cpu.js';

/** How the fake paces a stream (it reads this from the body's `bench_stream` field). */
export interface StreamShape {
  first_ms: number;
  every_ms: number;
  events: number;
}

/** What a stream's events look like to a client: which one first carries content, and the last one. */
export interface StreamDialect {
  /** Whether one event (the text before its blank line) carries content: parsed only until one does. */
  hasContent(event: string): boolean;
  /** The stream's last event as written: a stream that ends with anything else was cut. */
  last: string;
}

/** The `data: {…}` line of one event, parsed; undefined when it has none or it is not JSON. */
export function eventData(event: string): unknown {
  let at = 0;
  if (!event.startsWith('data: ')) {
    at = event.indexOf('\ndata: ') + 1;
    if (at === 0) return undefined;
  }
  const end = event.indexOf('\n', at);
  try {
    return JSON.parse(event.slice(at + 6, end === -1 ? undefined : end));
  } catch {
    return undefined;
  }
}

/** OpenAI's chat.completion.chunk events: content in `choices[0].delta.content`, then `data: [DONE]`. */
export const CHAT_CHUNKS: StreamDialect = {
  hasContent(event) {
    if (event === 'data: [DONE]') return false;
    const chunk = eventData(event) as { choices?: { delta?: { content?: unknown } }[] } | undefined;
    const content = chunk?.choices?.[0]?.delta?.content;
    return typeof content === 'string' && content !== '';
  },
  last: 'data: [DONE]\n\n',
};

/** A streamed chat completion's body asking the fake for a stream of `shape`. */
export const chatStreamBody = (shape: StreamShape) =>
  JSON.stringify({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'Say something about gateways.' }],
    stream: true,
    // Asked on every path, so that each forwards the same events (gatelog holds the usage event back
    // from a client that did not ask for it).
    stream_options: { include_usage: true },
    bench_stream: shape,
  });

/** One way to the fake provider, with its own keep-alive connections. */
export interface StreamPath<Name extends string = string> {
  name: Name;
  path: string;
  headers: Record<string, string>;
  pool: Pool;
  /** The process between the client and the fake (its CPU is measured); the fake itself for direct. */
  pid: number;
  dialect: StreamDialect;
  /** The request body that asks for a stream of this shape. */
  body(shape: StreamShape): string;
}

export interface StreamRead {
  ok: boolean;
  /** ms from opening the stream to the event holding the first content. */
  ttft: number;
  events: number;
  /** ms: the longest wait between two chunks of the stream (a stall shows here). */
  maxGap: number;
}

export interface LoopResult {
  ttfts: number[];
  /** Streams read whole. */
  streams: number;
  events: number;
  errors: number;
  seconds: number;
  /** CPU seconds of the path's process over the loop. */
  cpu: number;
  /** Each stream's longest wait between two chunks, for streams opened after the ramp. */
  maxGaps: number[];
}

const BLANK_LINE = Buffer.from('\n\n');

/** Blank lines (ends of events) in a chunk, one split across the chunk boundary included. */
function countEvents(chunk: Buffer, newlineBefore: boolean): number {
  let n = newlineBefore && chunk[0] === 0x0a ? 1 : 0;
  for (let at = chunk.indexOf(BLANK_LINE); at !== -1; at = chunk.indexOf(BLANK_LINE, at + 2)) n++;
  return n;
}

/**
 * Opens one stream and reads it to its end. The client is kept cheap — it shares the two cores with
 * the servers: events are only counted (blank lines), and JSON is parsed only until the first content.
 */
export async function readStream(path: StreamPath, payload: string): Promise<StreamRead> {
  const { hasContent, last } = path.dialect;
  const started = performance.now();
  const res = await path.pool.request({ path: path.path, method: 'POST', headers: path.headers, body: payload });
  if (res.statusCode !== 200) {
    await res.body.dump();
    return { ok: false, ttft: -1, events: 0, maxGap: 0 };
  }
  return new Promise((resolve, reject) => {
    let ttft = -1;
    let head = '';
    let events = 0;
    let newlineBefore = false;
    let tail = '';
    let lastChunk = -1;
    let maxGap = 0;
    res.body.on('data', (chunk: Buffer) => {
      const now = performance.now();
      if (lastChunk >= 0) maxGap = Math.max(maxGap, now - lastChunk);
      lastChunk = now;
      if (ttft < 0) {
        // latin1: one char a byte, so a character split across chunks cannot break the JSON of the events.
        head += chunk.toString('latin1');
        for (let end = head.indexOf('\n\n'); ttft < 0 && end !== -1; end = head.indexOf('\n\n')) {
          if (hasContent(head.slice(0, end))) ttft = performance.now() - started;
          head = head.slice(end + 2);
        }
      }
      events += countEvents(chunk, newlineBefore);
      newlineBefore = chunk[chunk.length - 1] === 0x0a;
      tail = (tail + chunk.toString('latin1', Math.max(0, chunk.length - last.length))).slice(-last.length);
    });
    res.body.once('end', () => resolve({ ok: ttft >= 0 && tail === last, ttft, events, maxGap }));
    res.body.once('error', reject);
  });
}

/**
 * `concurrency` clients, each opening a stream as soon as its last one ended, until `limit` (seconds,
 * or a number of streams opened). The clients start evenly over `rampMs` (one stream's length), so
 * that their streams do not open, and then tick, in step; time to first content is kept only for
 * streams opened after the ramp (every client then has its connection, and the load is steady).
 */
export async function closedLoop(
  path: StreamPath,
  shape: StreamShape,
  concurrency: number,
  limit: { seconds: number } | { streams: number },
  rampMs: number,
): Promise<LoopResult> {
  const payload = path.body(shape);
  const cpuBefore = cpuSeconds(path.pid);
  const start = performance.now();
  const stopAt = 'seconds' in limit ? start + limit.seconds * 1000 : Number.POSITIVE_INFINITY;
  const maxStreams = 'streams' in limit ? limit.streams : Number.POSITIVE_INFINITY;
  const result: LoopResult = { ttfts: [], streams: 0, events: 0, errors: 0, seconds: 0, cpu: 0, maxGaps: [] };
  let opened = 0;
  const client = async (i: number) => {
    await sleep((rampMs * i) / concurrency);
    while (performance.now() < stopAt && opened < maxStreams) {
      opened++;
      const at = performance.now();
      try {
        const read = await readStream(path, payload);
        if (read.ok) {
          result.streams++;
          result.events += read.events;
          if (at - start >= rampMs) {
            result.ttfts.push(read.ttft);
            result.maxGaps.push(read.maxGap);
          }
          continue;
        }
      } catch {
        // counted below
      }
      result.errors++;
      // A path that fails at once must not spin this process and starve the servers.
      await sleep(10);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, i) => client(i)));
  result.seconds = (performance.now() - start) / 1000;
  result.cpu = cpuSeconds(path.pid) - cpuBefore;
  return result;
}

/** Streams open at the fake (fake-upstream-server.ts) at once since the last ask (then reset). */
export async function upstreamPeak(fake: URL): Promise<number> {
  const res = await request(`${fake.origin}${fake.pathname}/bench/streams`);
  return ((await res.body.json()) as { peak: number }).peak;
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
export const pct = (xs: number[], p: number) =>
  xs.length === 0
    ? Number.NaN
    : percentile(
        [...xs].sort((a, b) => a - b),
        p,
      );
export const ms = (v: number) => v.toFixed(2);
export const signed = (v: number) => `${v >= 0 ? '+' : ''}${v.toFixed(2)}`;
/** The paths in a turning order: round r starts with the path r − 1 steps along. */
export const turn = <T>(xs: T[], round: number) => xs.map((_, i) => xs[(i + round - 1) % xs.length]);

/** One path's time to first content in a round: percentiles, streams timed, errors, the upstream's peak. */
export interface TtftStats {
  p50: number;
  p99: number;
  n: number;
  errors: number;
  peak: number;
}

/**
 * One round of the time-to-first-content measure: each path in the round's turn (so the machine's noisy
 * stretches fall on all of them), the upstream's peak of open streams read after each.
 */
export async function ttftRound<Name extends string>(
  paths: StreamPath<Name>[],
  round: number,
  measure: (path: StreamPath<Name>) => Promise<LoopResult>,
  peak: () => Promise<number>,
): Promise<Map<Name, TtftStats>> {
  const by = new Map<Name, TtftStats>();
  for (const path of turn(paths, round)) {
    const r = await measure(path);
    by.set(path.name, {
      p50: pct(r.ttfts, 50),
      p99: pct(r.ttfts, 99),
      n: r.ttfts.length,
      errors: r.errors,
      peak: await peak(),
    });
  }
  return by;
}
