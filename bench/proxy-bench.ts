/**
 * Embeddings proxy overhead (issue: the embeddings proxy). A fake upstream that answers at once runs in
 * its own process, `gatelog serve` (SQLite, logging on) in another, and autocannon drives loopback load
 * from this one. Direct-to-fake and through-gatelog runs are interleaved in one session:
 * latency p50/p99 at fixed rates, then maximum throughput at 64 connections. Afterwards the logs are
 * counted (every 2xx through gatelog must have one) and the peak RSS of gatelog is reported.
 *
 *   npm run bench -- proxy [--seconds 10]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { createApiKey } from '../src/auth/api-keys.js';
import { createOrganization } from '../src/auth/organizations.js';
import { connect } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { setProviderKey } from '../src/providers/credentials.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const BODY = JSON.stringify({ model: 'text-embedding-3-small', input: 'hello world', encoding_format: 'base64' });

function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('\n')) resolve(out.split('\n')[0].trim());
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code}: ${out}`)));
  });
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

function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

interface Run {
  p50: number;
  p99: number;
  rps: number;
  ok: number;
  errors: number;
}

async function load(url: string, key: string, seconds: number, connections: number, rate?: number): Promise<Run> {
  const result = await autocannon({
    url,
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: BODY,
    connections,
    duration: seconds,
    overallRate: rate,
  });
  return {
    p50: result.latency.p50,
    p99: result.latency.p99,
    rps: result.requests.average,
    ok: result['2xx'],
    errors: result.non2xx + result.errors + result.timeouts,
  };
}

export async function runProxyBench(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { seconds: { type: 'string', default: '10' } } });
  const seconds = Number(values.seconds);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatelog-proxy-bench-'));
  const secret = crypto.randomBytes(32).toString('hex');
  const dbFile = path.join(dir, 'gatelog.db');

  const fake = spawn(process.execPath, [path.join(here, 'fake-upstream-server.js')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const fakeUrl = await firstLine(fake);

  const handle = connect({ kind: 'sqlite', path: dbFile, isDefault: false });
  await migrateToLatest(handle.db);
  const org = await createOrganization(handle.db, 'bench');
  const key = (await createApiKey(handle.db, { organizationId: org.id, name: 'bench', isTest: false })).key;
  await setProviderKey(handle.db, Buffer.from(secret, 'hex'), {
    organizationId: org.id,
    provider: 'openai',
    apiKey: 'sk-bench',
    baseUrl: fakeUrl,
  });
  await handle.db.destroy();

  const port = 18000 + Math.floor(Math.random() * 1000);
  const gatelog = spawn(process.execPath, [path.join(here, '../../bin/gatelog.js'), 'serve'], {
    env: {
      PATH: process.env.PATH ?? '',
      GATELOG_DATABASE_URL: dbFile,
      GATELOG_SECRET_KEY: secret,
      GATELOG_PORT: String(port),
      GATELOG_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const gatelogUrl = `http://127.0.0.1:${port}`;
  await waitForHealth(gatelogUrl);
  let peakRss = 0;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMb(gatelog.pid!))), 200);

  const direct = `${fakeUrl}/embeddings`;
  const proxied = `${gatelogUrl}/api/embeddings`;
  // Warm both paths (JIT, connection pools) before measuring.
  await load(direct, key, 2, 16);
  const warmOk = (await load(proxied, key, 2, 16)).ok;

  const rows: string[] = [];
  let proxiedOk = 0;
  for (const rate of [500, 1000]) {
    const d = await load(direct, key, seconds, 32, rate);
    const g = await load(proxied, key, seconds, 32, rate);
    proxiedOk += g.ok;
    rows.push(
      `| ${rate} req/s | ${d.p50} / ${d.p99} | ${g.p50} / ${g.p99} | +${(g.p50 - d.p50).toFixed(2)} / +${(g.p99 - d.p99).toFixed(2)} | ${g.errors} |`,
    );
    console.log(rows.at(-1));
  }
  const dMax = await load(direct, key, seconds, 64);
  const gMax = await load(proxied, key, seconds, 64);
  proxiedOk += gMax.ok;
  clearInterval(sampler);

  gatelog.kill('SIGTERM');
  await new Promise((r) => gatelog.once('exit', r));
  fake.kill('SIGTERM');
  const counted = connect({ kind: 'sqlite', path: dbFile, isDefault: false });
  const { count } = await counted.db
    .selectFrom('logs')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  await counted.db.destroy();
  const expected = proxiedOk + warmOk;

  console.log(`
embeddings proxy, SQLite, logging on, ${seconds} s per run (latency ms, p50 / p99):
| load | direct to fake | through gatelog | added | gatelog non-2xx |
|---|---|---|---|---|
${rows.join('\n')}

max throughput at 64 connections: direct ${dMax.rps.toFixed(0)} req/s, through gatelog ${gMax.rps.toFixed(0)} req/s (${((100 * gMax.rps) / dMax.rps).toFixed(0)}% of direct; non-2xx ${gMax.errors})
logs stored: ${count} for ${expected} answered 2xx calls (warm-up included): ${Number(count) === expected ? 'every call logged' : 'MISMATCH'}
gatelog peak RSS: ${peakRss.toFixed(0)} MB`);
  fs.rmSync(dir, { recursive: true, force: true });
}
