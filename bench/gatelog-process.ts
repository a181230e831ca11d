/** A bench's own database and `gatelog serve` processes on it. */
import { type ChildProcess, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createApiKey } from '../src/auth/api-keys.js';
import { createOrganization } from '../src/auth/organizations.js';
import type { DatabaseTarget } from '../src/config.js';
import { connect } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * A process's resident memory in MB, or 0 once it has gone (a sampler may outlive it by a tick).
 * `RssAnon` counts only its own memory (heaps, buffers), without the pages of files it has mapped —
 * the SQLite readers map the database file, and those pages are the kernel's cache, given back on demand.
 */
export function rssMb(pid: number, field: 'VmRSS' | 'RssAnon' = 'VmRSS'): number {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}
/**
 * Node.js options for a gatelog process a bench starts: GATELOG_BENCH_CPU_PROF=DIR writes a CPU profile
 * there (node --cpu-prof), GATELOG_BENCH_HEAP_PROF=DIR a sampled profile of every allocation (allocation-probe.ts); GATELOG_BENCH_NODE_ARGS adds options of an experiment (e.g. "--trace-gc").
 */
export function benchNodeArgs(): string[] {
  const profile = process.env.GATELOG_BENCH_CPU_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.GATELOG_BENCH_CPU_PROF}`]
    : [];
  const allocations = process.env.GATELOG_BENCH_HEAP_PROF
    ? [`--require=${path.join(here, 'allocation-probe.js')}`]
    : [];
  return [...profile, ...allocations, ...(process.env.GATELOG_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)];
}

/**
 * The bench's own settings a gatelog process it starts must see (allocation-probe.ts reads its
 * directory). One process, not one per core: the figures (CPU, heap, latency of the process started)
 * are one process's, as bench/README.md's are.
 */
export function benchEnv(): Record<string, string> {
  const dir = process.env.GATELOG_BENCH_HEAP_PROF;
  return { GATELOG_WORKERS: '1', ...(dir ? { GATELOG_BENCH_HEAP_PROF: dir } : {}) };
}

export const PG_URL = process.env.GATELOG_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A fresh database (SQLite file or PostgreSQL database), migrated, with one organization and key. */
export async function freshDatabase(dialect: string) {
  let target: DatabaseTarget;
  let drop: () => Promise<void>;
  if (dialect === 'postgres') {
    const name = `gatelog_bench_ingest_${crypto.randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    const url = new URL(PG_URL);
    url.pathname = `/${name}`;
    target = { kind: 'postgres', url: url.toString() };
    drop = async () => {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    };
  } else {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatelog-ingest-bench-'));
    target = { kind: 'sqlite', path: path.join(dir, 'gatelog.db'), isDefault: false };
    drop = async () => fs.rmSync(dir, { recursive: true, force: true });
  }
  const handle = connect(target);
  await migrateToLatest(handle.db);
  const org = await createOrganization(handle.db, 'bench');
  const key = await createApiKey(handle.db, { organizationId: org.id, name: 'bench', isTest: false });
  await handle.db.destroy();
  return { target, drop, org, key };
}

/** A port nothing listens on now: two processes a bench starts at once never draw the same one. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Starts `gatelog serve` on `target` and waits until /health answers. Nodes of one deployment share
 * `secret` (GATELOG_SECRET_KEY); `env` adds settings; `workers` runs `serve --workers N` (default: one
 * process, benchEnv's).
 */
export async function startGatelog(
  target: DatabaseTarget,
  options: { secret?: string; env?: Record<string, string>; workers?: number } = {},
): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const workers = options.workers === undefined ? [] : ['--workers', String(options.workers)];
  const child = spawn(
    process.execPath,
    [...benchNodeArgs(), path.join(here, '../../bin/gatelog.js'), 'serve', ...workers],
    {
      env: {
        PATH: process.env.PATH ?? '',
        GATELOG_DATABASE_URL: target.kind === 'postgres' ? target.url : target.path,
        GATELOG_SECRET_KEY: options.secret ?? crypto.randomBytes(32).toString('hex'),
        GATELOG_PORT: String(port),
        GATELOG_LOG_LEVEL: 'warn',
        ...benchEnv(),
        ...options.env,
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  const url = `http://127.0.0.1:${port}`;
  // A fresh PostgreSQL database is migrated first: on a loaded machine that takes well over 10 s.
  const deadline = performance.now() + 60_000;
  while (performance.now() < deadline) {
    try {
      if ((await fetch(`${url}/health`)).ok) return { child, url };
    } catch {
      // not up yet
    }
    if (child.exitCode !== null || child.signalCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  // Not left running behind the bench's error.
  child.kill('SIGKILL');
  throw new Error('gatelog did not become healthy');
}

/** `gatelog serve` on a fresh database, with a key whose provider key points at a fake upstream. */
export interface KeyedGatelog {
  /** The first node's process (the primary, with workers). */
  child: ChildProcess;
  /** The first node's origin. */
  url: string;
  /** Every node, the first included: separate `gatelog serve` processes on the one database. */
  nodes: { child: ChildProcess; url: string }[];
  /** The database they share, for counting what they wrote. */
  target: DatabaseTarget;
  /** The key's secret, for Authorization. */
  key: string;
  /** Stops every node and drops the database. */
  stop(): Promise<void>;
}

/** How a keyed gatelog is run: `workers` per node (`serve --workers N`), `nodes` processes (PostgreSQL). */
export interface GatelogShape {
  workers?: number;
  nodes?: number;
}

/**
 * A gatelog on a fresh database whose key calls the fake at `fakeUrl` (an OpenAI base URL). `limited`:
 * the key has a budget and a rate limit, both never reached, so that what a call pays is their
 * bookkeeping and not a refusal. `shape`: one process unless told otherwise.
 */
export async function startKeyedGatelog(
  dialect: string,
  fakeUrl: string,
  limited: boolean,
  shape: GatelogShape = {},
): Promise<KeyedGatelog> {
  const { target, drop, key } = await freshDatabase(dialect);
  // Nodes of one deployment share the secret key: each decrypts the provider key the first stored.
  const secret = crypto.randomBytes(32).toString('hex');
  const started = await Promise.allSettled(
    Array.from({ length: shape.nodes ?? 1 }, () => startGatelog(target, { secret, workers: shape.workers })),
  );
  const nodes = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const stop = async () => {
    await Promise.all(
      nodes.map(async ({ child }) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }),
    );
    await drop();
  };
  const { url } = nodes[0] ?? { url: '' };
  const call = async (method: string, route: string, body: unknown) => {
    const res = await fetch(`${url}${route}`, {
      method,
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
  };
  try {
    // A node that did not start: the others are stopped and the database dropped, as after a run.
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
    await call('POST', '/api/provider-keys/', { provider: 'openai', api_key: 'sk-bench', base_url: fakeUrl });
    if (limited) {
      await call('PATCH', `/api/keys/${key.id}/`, {
        rate_limits: { requests_per_minute: 10_000_000, tokens_per_minute: 1_000_000_000 },
      });
      await call('POST', '/api/budgets/', {
        name: 'bench',
        applies_to: { type: 'key', value: key.id },
        amount_usd: 1_000_000_000,
      });
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { child: nodes[0].child, url, nodes, target, key: key.key, stop };
}
