/**
 * The response cache (docs/api.md "Response cache"): what a cache hit costs through gatelog, measured
 * beside a miss in the same run, on SQLite and on PostgreSQL (when GATELOG_BENCH_PG_URL names a server,
 * or `--db postgres`), all on 127.0.0.1 with the fake upstream in its own process.
 *
 * 1. Open-loop load at `--rate` calls/s for `--seconds`, in `--rounds` interleaved rounds: the same chat
 *    completion every time with `cache_enabled` (a hit after the first), the same call without the
 *    cache (each a miss: to the fake and back), and the same call straight to the fake (the floor: the
 *    load generator's own time and the fake's). Latency from the scheduled send to the end of the answer.
 * 2. Embeddings: 90 of 100 inputs embedded first, then the 100; the share of the inputs the provider
 *    was sent (its usage: the fake counts 4 tokens an input).
 *
 * Target: a hit's p50 at most 2 ms at 500 calls/s on each database.
 *
 *   npm run bench -- cache [--db sqlite|postgres] [--rate 500] [--seconds 8] [--rounds 3]
 */
import crypto from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { connect } from '../src/db/connect.js';
import { setProviderKey } from '../src/providers/credentials.js';
import { BUILT_IN_PROVIDER_KINDS } from '../src/providers/registry.js';
import { percentile } from './bench-store.js';
import { freshDatabase, startGatelog } from './gatelog-process.js';
import { startServer } from './proxy-bench.js';
import { rateLoad, type RateResult } from './rate-load.js';
import { record } from './summary.js';

const median = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );

export async function runCacheBench(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      db: { type: 'string' },
      rate: { type: 'string', default: '500' },
      seconds: { type: 'string', default: '8' },
      rounds: { type: 'string', default: '3' },
    },
  });
  const rate = Number(values.rate);
  const seconds = Number(values.seconds);
  const rounds = Number(values.rounds);
  const databases = values.db ? [values.db] : process.env.GATELOG_BENCH_PG_URL ? ['sqlite', 'postgres'] : ['sqlite'];
  for (const db of databases) await benchOne(db, rate, seconds, rounds);
}

async function benchOne(db: string, rate: number, seconds: number, rounds: number): Promise<void> {
  const { child: fake, url: fakeUrl } = await startServer('fake-upstream-server.js');
  const { target, drop, org, key } = await freshDatabase(db);
  const secret = crypto.randomBytes(32).toString('hex');
  const handle = connect(target);
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
  await handle.close();
  const gatelog = await startGatelog(target, { secret });
  const headers = { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' };
  const chat = (cache: boolean) =>
    JSON.stringify({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'What does a cache hit cost?' }],
      cache_enabled: cache,
    });
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${gatelog.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    return { status: res.status, cache: res.headers.get('x-gatelog-cache'), body: (await res.json()) as never };
  };
  try {
    // Stored once; then a warm-up of both paths.
    await fetch(`${gatelog.url}/api/chat/completions`, { method: 'POST', headers, body: chat(true) });
    await sleep(500);
    const check = await fetch(`${gatelog.url}/api/chat/completions`, { method: 'POST', headers, body: chat(true) });
    if (check.headers.get('x-gatelog-cache') !== 'HIT') throw new Error('the stored answer is not a hit');
    await check.arrayBuffer();
    await rateLoad(`${gatelog.url}/api/chat/completions`, headers, chat(true), rate, 2);
    await rateLoad(`${gatelog.url}/api/chat/completions`, headers, chat(false), rate, 2);

    const runs: Record<'hit' | 'miss' | 'direct', RateResult[]> = { hit: [], miss: [], direct: [] };
    const paths = {
      hit: () => rateLoad(`${gatelog.url}/api/chat/completions`, headers, chat(true), rate, seconds),
      miss: () => rateLoad(`${gatelog.url}/api/chat/completions`, headers, chat(false), rate, seconds),
      direct: () => rateLoad(`${fakeUrl}/chat/completions`, headers, chat(false), rate, seconds),
    };
    const names = Object.keys(paths) as (keyof typeof paths)[];
    console.log(`\ncache on ${db}: ${rate} calls/s for ${seconds} s, ${rounds} rounds (ms, p50 / p99)`);
    console.log('| round | hit | miss | direct to the fake | errors |\n|---|---|---|---|---|');
    for (let round = 0; round < rounds; round++) {
      // The order turns each round, so that the machine's noisy stretches fall on all alike.
      for (let i = 0; i < names.length; i++) {
        const name = names[(i + round) % names.length];
        runs[name].push(await paths[name]());
      }
      const shown = names.map((n) => `${runs[n][round].p50.toFixed(2)} / ${runs[n][round].p99.toFixed(2)}`);
      console.log(`| ${round + 1} | ${shown.join(' | ')} | ${names.reduce((e, n) => e + runs[n][round].errors, 0)} |`);
    }
    const sentP50 = (name: keyof typeof runs) => median(runs[name].map((r) => r.sentP50));
    console.log(
      `from when each call was handed to the client (without the load generator's timer lag), p50: hit ` +
        `${sentP50('hit').toFixed(2)} ms, miss ${sentP50('miss').toFixed(2)} ms, direct ${sentP50('direct').toFixed(2)} ms`,
    );
    const hitP50 = median(runs.hit.map((r) => r.p50));
    const missP50 = median(runs.miss.map((r) => r.p50));
    const directP50 = median(runs.direct.map((r) => r.p50));
    console.log(
      `hit p50 ${hitP50.toFixed(2)} ms (p99 ${median(runs.hit.map((r) => r.p99)).toFixed(2)}), miss p50 ` +
        `${missP50.toFixed(2)} ms, direct p50 ${directP50.toFixed(2)} ms: a hit adds ${(hitP50 - directP50).toFixed(2)} ms`,
    );
    console.log(
      `| target | measured | |\n|---|---|---|\n| a hit's p50 ≤ 2 ms at ${rate}/s | ${hitP50.toFixed(2)} ms ` +
        `(floor: direct to the fake ${directP50.toFixed(2)} ms) | ${hitP50 <= 2 ? 'met' : 'MISSED'} |\n` +
        `| a hit's p50 ≤ 2 ms at ${rate}/s, from when it was sent | ${sentP50('hit').toFixed(2)} ms | ` +
        `${sentP50('hit') <= 2 ? 'met' : 'MISSED'} |\n` +
        `| a hit's p50 below a miss's | ${hitP50.toFixed(2)} vs ${missP50.toFixed(2)} ms | ${hitP50 < missP50 ? 'met' : 'MISSED'} |`,
    );
    record('cache', db, `hit p50 at ${rate}/s`, hitP50, 'ms');
    record('cache', db, `miss p50 at ${rate}/s`, missP50, 'ms');
    record('cache', db, `direct p50 at ${rate}/s`, directP50, 'ms');
    record('cache', db, `hit p50 at ${rate}/s, from when sent`, sentP50('hit'), 'ms');

    // Embeddings: 90 of 100 inputs known.
    const run = crypto.randomBytes(4).toString('hex');
    const inputs = Array.from({ length: 100 }, (_, i) => `${run} input ${i}`);
    const embed = (input: string[]) =>
      post('/api/embeddings', {
        model: 'text-embedding-3-small',
        input,
        encoding_format: 'base64',
        cache_enabled: true,
      });
    const first = await embed(inputs.slice(0, 90));
    await sleep(500);
    const second = await embed(inputs);
    const usage = (r: { body: { usage: { prompt_tokens: number } } }) => r.body.usage.prompt_tokens;
    const sent = usage(second) / 4;
    console.log(
      `embeddings: 90 of 100 inputs known → ${second.cache}, ${sent} inputs sent upstream ` +
        `(first call ${usage(first) / 4}), ${(second.body as { data: unknown[] }).data.length} answered`,
    );
    record('cache', db, 'embeddings inputs sent, 90 of 100 known', sent, 'inputs');
  } finally {
    gatelog.child.kill('SIGTERM');
    await new Promise((resolve) => gatelog.child.once('exit', resolve));
    fake.kill('SIGTERM');
    await drop();
  }
}
