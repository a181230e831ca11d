/**
 * Embeddings proxy overhead (issue: the embeddings proxy). A fake upstream that answers at once runs in
 * its own process, `gatelog serve` (SQLite, logging on) in another, and autocannon drives loopback load
 * from this one. Direct-to-fake and through-gatelog runs are interleaved in one session:
 * latency p50/p99 at fixed rates (`--rounds` pairs per rate, median reported), then maximum throughput
 * at 64 connections, in pairs with the minimal Node proxy (minimal-proxy-server.ts). Afterwards the
 * logs are counted (every 2xx through gatelog must have one) and the peak RSS of gatelog is reported.
 *
 *   npm run bench -- proxy [--seconds 10] [--rounds 3] [--max-only]
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { connect } from '../src/db/connect.js';
import { setProviderKey } from '../src/providers/credentials.js';
import { BUILT_IN_PROVIDER_KINDS } from '../src/providers/registry.js';
import { benchEnv, benchNodeArgs, rssMb } from './gatelog-process.js';
import { rateLoad } from './rate-load.js';
import { MEASURE, record } from './summary.js';

const here = path.dirname(fileURLToPath(import.meta.url));
/** Calls in flight when gatelog's closed-loop runs stop: 16 (warm-up) + 64 per maximum-throughput run. */
const cutOffFor = (rounds: number) => 16 + 64 * rounds;
export const BODY = JSON.stringify({
  model: 'text-embedding-3-small',
  input: 'hello world',
  encoding_format: 'base64',
});

/** Starts one of the bench's servers (a script next to this file) and reads the URL it prints first. */
export async function startServer(script: string, args: string[] = []): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [path.join(here, script), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('\n')) resolve(out.split('\n')[0].trim());
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code}: ${out}`)));
  });
  return { child, url };
}

async function waitForHealth(url: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`${url}/health`)).ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('gatelog did not become healthy');
}

interface Run {
  rps: number;
  ok: number;
  errors: number;
}

/** Closed-loop load at full speed (autocannon): throughput. Without a key, no Authorization header. */
export async function load(url: string, key: string | null, seconds: number, connections: number): Promise<Run> {
  const result = await autocannon({
    url,
    method: 'POST',
    headers: { ...(key === null ? {} : { authorization: `Bearer ${key}` }), 'content-type': 'application/json' },
    body: BODY,
    connections,
    duration: seconds,
  });
  return {
    rps: result.requests.average,
    ok: result['2xx'],
    errors: result.non2xx + result.errors + result.timeouts,
  };
}

/** The fake upstream and `gatelog serve` (SQLite, logging on), each in its own process, with one API key. */
export interface ProxyStack {
  fakeUrl: string;
  /** The fake upstream's process, for its CPU time and open connections. */
  fakePid: number;
  gatelogUrl: string;
  gatelogPid: number;
  key: string;
  /** Stops both processes and returns how many logs gatelog stored. */
  stop(): Promise<number>;
}

/**
 * `bin`: the gatelog command to run (another build's, to compare with; default this one's). `anthropic`:
 * also a provider named `anthropic` (kind anthropic) whose base URL is the fake, for Claude's calls.
 * `nodeArgs`: Node.js options for gatelog's process (e.g. heap-probe.ts's).
 */
export async function startProxyStack(
  bin = path.join(here, '../../bin/gatelog.js'),
  { anthropic = false, nodeArgs = [] }: { anthropic?: boolean; nodeArgs?: string[] } = {},
): Promise<ProxyStack> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatelog-proxy-bench-'));
  const secret = crypto.randomBytes(32).toString('hex');
  const dbFile = path.join(dir, 'gatelog.db');

  const { child: fake, url: fakeUrl } = await startServer('fake-upstream-server.js');

  // The build under test makes its own database (another build's migrations and keys may differ from
  // this one's); the provider key is set through this build's code, whose tables are the same.
  const cli = (...args: string[]) =>
    execFileSync(process.execPath, [bin, ...args, '--json'], {
      env: { PATH: process.env.PATH ?? '', GATELOG_DATABASE_URL: dbFile, GATELOG_SECRET_KEY: secret },
      encoding: 'utf8',
    });
  cli('migrate');
  const org = JSON.parse(cli('orgs', 'create', 'bench')) as { id: string };
  const key = (JSON.parse(cli('keys', 'create', '--org', org.id, '--name', 'bench')) as { key: string }).key;
  const handle = connect({ kind: 'sqlite', path: dbFile, isDefault: false });
  await setProviderKey(
    handle.db,
    Buffer.from(secret, 'hex'),
    {
      organizationId: org.id,
      provider: 'openai',
      apiKey: 'sk-bench',
      baseUrl: fakeUrl,
    },
    BUILT_IN_PROVIDER_KINDS,
  );
  if (anthropic) {
    await setProviderKey(
      handle.db,
      Buffer.from(secret, 'hex'),
      {
        organizationId: org.id,
        provider: 'anthropic',
        kind: 'anthropic',
        apiKey: 'sk-ant-bench',
        baseUrl: new URL(fakeUrl).origin,
      },
      BUILT_IN_PROVIDER_KINDS,
    );
  }
  await handle.close();

  const port = 18000 + Math.floor(Math.random() * 2000);
  const gatelog = spawn(process.execPath, [...benchNodeArgs(), ...nodeArgs, bin, 'serve'], {
    env: {
      PATH: process.env.PATH ?? '',
      GATELOG_DATABASE_URL: dbFile,
      GATELOG_SECRET_KEY: secret,
      GATELOG_PORT: String(port),
      GATELOG_LOG_LEVEL: 'warn',
      ...benchEnv(),
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const gatelogUrl = `http://127.0.0.1:${port}`;
  await waitForHealth(gatelogUrl);
  const stop = async () => {
    gatelog.kill('SIGTERM');
    await new Promise((r) => gatelog.once('exit', r));
    fake.kill('SIGTERM');
    const counted = connect({ kind: 'sqlite', path: dbFile, isDefault: false });
    const { count } = await counted.db
      .selectFrom('logs')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow();
    await counted.close();
    fs.rmSync(dir, { recursive: true, force: true });
    return Number(count);
  };
  return { fakeUrl, fakePid: fake.pid!, gatelogUrl, gatelogPid: gatelog.pid!, key, stop };
}

export async function runProxyBench(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    // --max-only: just the maximum-throughput pair (for profiling with GATELOG_BENCH_CPU_PROF).
    options: {
      seconds: { type: 'string', default: '10' },
      rounds: { type: 'string', default: '3' },
      'max-only': { type: 'boolean', default: false },
      // Only the heavy-list scenario: proxied p99 at 500 req/s alone and with heavy list calls running.
      'heavy-list': { type: 'boolean', default: false },
    },
  });
  const seconds = Number(values.seconds);
  const rounds = Number(values.rounds);
  const { fakeUrl, gatelogUrl, gatelogPid, key, stop } = await startProxyStack();
  let peakRss = 0;
  let peakAnon = 0;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, rssMb(gatelogPid));
    peakAnon = Math.max(peakAnon, rssMb(gatelogPid, 'RssAnon'));
  }, 200);

  const direct = `${fakeUrl}/embeddings`;
  const proxied = `${gatelogUrl}/api/embeddings`;
  // Warm both paths (JIT, connection pools) before measuring.
  await load(direct, key, 2, 16);
  const warmOk = (await load(proxied, key, 2, 16)).ok;

  const rows: string[] = [];
  let proxiedOk = 0;
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const ms = (v: number) => v.toFixed(2);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  if (values['heavy-list']) {
    const result = await heavyListScenario(gatelogUrl, proxied, key, headers, seconds, rounds);
    clearInterval(sampler);
    await stop();
    console.log(result.text);
    return;
  }
  for (const rate of values['max-only'] ? [] : [500, 1000]) {
    // Several interleaved direct/gatelog pairs per rate: this shared machine has quiet and noisy
    // stretches of seconds, and one pair can land in either. Every pair is shown; the median is the result.
    const added: { p50: number; p99: number }[] = [];
    for (let round = 1; round <= rounds; round++) {
      const d = await rateLoad(direct, headers, BODY, rate, seconds);
      const g = await rateLoad(proxied, headers, BODY, rate, seconds);
      proxiedOk += g.ok;
      added.push({ p50: g.p50 - d.p50, p99: g.p99 - d.p99 });
      rows.push(
        `| ${rate} req/s, pair ${round} | ${ms(d.p50)} / ${ms(d.p99)} | ${ms(g.p50)} / ${ms(g.p99)} | +${ms(g.p50 - d.p50)} / +${ms(g.p99 - d.p99)} | ${g.errors} |`,
      );
      console.log(rows.at(-1));
    }
    record('proxy', '-', `added p50 at ${rate.toLocaleString('en')}/s`, median(added.map((a) => a.p50)), 'ms');
    record('proxy', '-', MEASURE.addedP99At(rate), median(added.map((a) => a.p99)), 'ms');
    rows.push(
      `| **${rate} req/s, median of ${rounds}** | | | **+${ms(median(added.map((a) => a.p50)))} / +${ms(median(added.map((a) => a.p99)))}** | |`,
    );
  }
  // Maximum throughput: the minimal Node proxy (the floor, on the same fake upstream) and gatelog in
  // interleaved pairs, driven by this same process: a ratio taken from runs seconds apart, or from
  // another process whose load generator shares the cores differently, measures the machine's drift.
  const { child: minimal, url: minimalUrl } = await startServer('minimal-proxy-server.js', [new URL(fakeUrl).origin]);
  const dMax = await load(direct, key, seconds, 64);
  const pairs: { floor: number; gatelog: number }[] = [];
  let gErrors = 0;
  try {
    await load(`${minimalUrl}/embeddings`, null, 2, 16);
    for (let round = 1; round <= rounds; round++) {
      const floor = await load(`${minimalUrl}/embeddings`, null, seconds, 64);
      const gMax = await load(proxied, key, seconds, 64);
      proxiedOk += gMax.ok;
      gErrors += gMax.errors;
      pairs.push({ floor: floor.rps, gatelog: gMax.rps });
      console.log(
        `max throughput, pair ${round}: minimal proxy ${floor.rps.toFixed(0)} req/s, gatelog ${gMax.rps.toFixed(0)} req/s (${(gMax.rps / floor.rps).toFixed(2)}×)`,
      );
    }
  } finally {
    minimal.kill();
  }
  const maxRps = median(pairs.map((p) => p.gatelog));
  record('proxy', '-', 'direct throughput', dMax.rps, 'req/s');
  record('proxy', '-', 'minimal proxy throughput (median of pairs)', median(pairs.map((p) => p.floor)), 'req/s');
  record('proxy', '-', MEASURE.maxThroughput, maxRps, 'req/s');
  record('proxy', '-', MEASURE.throughputOfFloor, median(pairs.map((p) => p.gatelog / p.floor)), '×');
  // In a whole-suite run, the heavy-list scenario too (its calls are logged: counted below).
  const heavy = values['max-only'] ? null : await heavyListScenario(gatelogUrl, proxied, key, headers, seconds, rounds);
  clearInterval(sampler);

  const count = await stop();
  const expected = proxiedOk + warmOk + (heavy?.ok ?? 0);
  // autocannon stops with calls in flight: 64 at each maximum-throughput run, 32 at the heavy-list warm-up.
  const cutOff = cutOffFor(rounds) + (heavy ? 32 : 0);

  console.log(`
embeddings proxy, SQLite, logging on, ${seconds} s per run (latency ms, p50 / p99):
| load | direct to fake | through gatelog | added | gatelog non-2xx |
|---|---|---|---|---|
${rows.join('\n')}

max throughput at 64 connections: direct ${dMax.rps.toFixed(0)} req/s, through gatelog ${maxRps.toFixed(0)} req/s (median of ${rounds}; ${((100 * maxRps) / dMax.rps).toFixed(0)}% of direct; non-2xx ${gErrors})
logs stored: ${count} for ${expected} 2xx answers counted by the load generators (warm-up included): ${
    count >= expected && count <= expected + cutOff ? 'every call logged' : 'MISMATCH'
  } (autocannon stops with up to ${cutOff} calls in flight: answered and logged, not counted)
gatelog peak RSS: ${peakRss.toFixed(0)} MB, of which its own memory (not mapped database pages) at most ${peakAnon.toFixed(0)} MB${heavy ? `\n${heavy.text}` : ''}`);
  record('proxy', '-', 'peak RSS', peakRss, 'MB');
  record('proxy', '-', 'peak RSS without mapped database pages', peakAnon, 'MB');
}

/**
 * A list call that tests every log of the day against 1,000 substrings, with fetch_filters: seconds of
 * database work, which must not show in the latency of proxied calls meanwhile.
 */
async function heavyList(gatelogUrl: string, key: string): Promise<number> {
  const end = new Date().toISOString();
  const start = new Date(Date.now() - 86_400_000).toISOString();
  const values = (prefix: string) => Array.from({ length: 500 }, (_, i) => `${prefix}-${i}`);
  const res = await fetch(
    `${gatelogUrl}/api/request-logs/list/?start_time=${start}&end_time=${end}&fetch_filters=true&page_size=100`,
    {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        filters: {
          error_message: { operator: 'icontains', value: values('absent') },
          customer_identifier: { operator: 'icontains', value: values('nowhere') },
        },
      }),
    },
  );
  await res.arrayBuffer();
  return res.status;
}

async function heavyListScenario(
  gatelogUrl: string,
  proxied: string,
  key: string,
  headers: Record<string, string>,
  seconds: number,
  rounds: number,
): Promise<{ text: string; median: number; ok: number }> {
  // Logs for the list to read: the warm-up wrote some; 20 more seconds at full speed write many more.
  let ok = (await load(proxied, key, 20, 32)).ok;
  const rows: string[] = [];
  const moved: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    const alone = await rateLoad(proxied, headers, BODY, 500, seconds);
    let running = true;
    const lists: { ms: number; status: number }[] = [];
    const loop = (async () => {
      while (running) {
        const started = performance.now();
        const status = await heavyList(gatelogUrl, key);
        lists.push({ ms: performance.now() - started, status });
      }
    })();
    const withLists = await rateLoad(proxied, headers, BODY, 500, seconds);
    running = false;
    await loop;
    ok += alone.ok + withLists.ok;
    moved.push(withLists.p99 - alone.p99);
    const listMs = lists.map((l) => l.ms.toFixed(0)).join(', ');
    const statuses = [...new Set(lists.map((l) => l.status))].join('/');
    rows.push(
      `| ${round} | ${alone.p50.toFixed(2)} / ${alone.p99.toFixed(2)} | ${withLists.p50.toFixed(2)} / ${withLists.p99.toFixed(2)} | ${(withLists.p99 - alone.p99).toFixed(2)} | ${listMs} ms (${statuses}) |`,
    );
    console.log(rows.at(-1));
  }
  const median = [...moved].sort((a, b) => a - b)[Math.floor(moved.length / 2)];
  record('proxy', '-', MEASURE.heavyListMove, median, 'ms');
  const text = `
heavy list calls beside proxied calls at 500 req/s (ms, p50 / p99):
| pair | proxied alone | proxied with heavy lists | p99 moved | heavy list calls (status) |
|---|---|---|---|---|
${rows.join('\n')}
median p99 moved: ${median.toFixed(2)} ms`;
  return { text, median, ok };
}
