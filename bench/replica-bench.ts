/**
 * What a PostgreSQL read replica (GATELOG_DATABASE_READ_URL, docs/scaling.md "Read replicas") gives
 * gatelog: the same run in two shapes, each on a fresh database — the lists read from a hot standby,
 * then from the primary (no read URL).
 *
 * A run: logs through the logging API (`create`) at a fixed rate, open loop; beside it, every
 * `--marker-ms` one log with a unique customer_identifier, and from its acknowledgement the list API
 * polled with that customer as filter until the log is in an answer (ack → listed: what a user sees of
 * the replication lag; `create` answers after the commit, so on the primary the first list has it);
 * a default list page (last hour, 100 logs, counted) in a loop with a pause between; and, on the
 * primary, `replay_lag` from pg_stat_replication every 250 ms.
 *
 * The standby must be running (`scripts/pg-replica.sh up`: a hot standby of 127.0.0.1:5432 on 5433,
 * on the same machine); the bench exits non-zero without it. On one machine the standby's replay and
 * its reads take the same cores as the primary: the run shows the lag and that the split is right, not
 * extra capacity.
 *
 *   npm run bench -- replica [--rate 500] [--seconds 20] [--marker-ms 250] [--list-pause-ms 100]
 *     [--replica-url postgres://postgres@127.0.0.1:5433/postgres]
 */
import crypto from 'node:crypto';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createApiKey } from '../src/auth/api-keys.js';
import { createOrganization } from '../src/auth/organizations.js';
import { connect } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { PG_URL, startGatelog } from './gatelog-process.js';
import { logBody } from './ingest-bench.js';
import { rateLoad } from './rate-load.js';
import { pct } from './stream-load.js';

/** How long a marker may take to be listed before the run counts it missing. */
const VISIBLE_MS = 30_000;
/** Between two list polls for a marker not listed yet. */
const POLL_MS = 5;
/** Warm-up at the run's rate before measuring: JIT, pools, the standby's caches. */
const WARMUP_S = 2;

const f1 = (v: number) => (Number.isNaN(v) ? '–' : v.toFixed(1));
const f2 = (v: number) => (Number.isNaN(v) ? '–' : v.toFixed(2));
const loadAverage = () =>
  os
    .loadavg()
    .map((v) => v.toFixed(2))
    .join(' / ');

const withDatabase = (url: string, name: string) => {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
};

async function query<T>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as T[];
  } finally {
    await client.end();
  }
}

/** The standby answers and is in recovery, or the bench stops here saying how to start one. */
async function requireStandby(replicaUrl: string): Promise<void> {
  let inRecovery: boolean | null = null;
  try {
    inRecovery = (await query<{ r: boolean }>(replicaUrl, 'select pg_is_in_recovery() as r'))[0].r;
  } catch (err) {
    throw new Error(
      `replica: no PostgreSQL answers at ${replicaUrl} (${(err as Error).message}); start a standby with \`scripts/pg-replica.sh up\``,
    );
  }
  if (!inRecovery) {
    throw new Error(
      `replica: ${replicaUrl} is not a standby (not in recovery); start one with \`scripts/pg-replica.sh up\``,
    );
  }
}

/**
 * A fresh database on the primary, migrated, with one organization and key, and once the standby has
 * replayed its creation. Named apart from the seeded stores' prefix: those belong to other benches.
 */
async function freshReplicatedDatabase(replicaUrl: string) {
  const name = `gatelog_replica_run_${crypto.randomBytes(4).toString('hex')}`;
  await query(PG_URL, `create database ${name}`);
  const drop = () => query(PG_URL, `drop database if exists ${name} with (force)`).then(() => undefined);
  try {
    const url = withDatabase(PG_URL, name);
    const handle = connect({ kind: 'postgres', url });
    await migrateToLatest(handle.db);
    const org = await createOrganization(handle.db, 'bench');
    const key = await createApiKey(handle.db, { organizationId: org.id, name: 'bench', isTest: false });
    await handle.db.destroy();
    // The standby replays CREATE DATABASE as any other WAL; gatelog's start-up probes the replica.
    const deadline = performance.now() + 60_000;
    for (;;) {
      const rows = await query(replicaUrl, 'select 1 from pg_database where datname = $1', [name]);
      if (rows.length > 0) break;
      if (performance.now() > deadline) throw new Error(`replica: ${name} not on the standby after 60 s`);
      await sleep(100);
    }
    return { name, url, replicaDbUrl: withDatabase(replicaUrl, name), key: key.key, drop };
  } catch (err) {
    await drop();
    throw err;
  }
}

interface Shape {
  name: string;
  replica: boolean;
}

interface RunOptions {
  rate: number;
  seconds: number;
  markerMs: number;
  listPauseMs: number;
  replicaUrl: string;
}

interface RunResult {
  row: string;
  notes: string[];
}

async function getJson(url: string, key: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: await res.json() };
}

async function measureShape(shape: Shape, o: RunOptions): Promise<RunResult> {
  const before = os.loadavg()[0];
  const db = await freshReplicatedDatabase(o.replicaUrl);
  const notes: string[] = [];
  let gatelog: Awaited<ReturnType<typeof startGatelog>> | null = null;
  try {
    gatelog = await startGatelog(
      { kind: 'postgres', url: db.url },
      { env: shape.replica ? { GATELOG_DATABASE_READ_URL: db.replicaDbUrl } : {} },
    );
    const { url } = gatelog;
    const health = (await (await fetch(`${url}/health`)).json()) as { read_replica?: string };
    if (shape.replica && health.read_replica !== 'ok') {
      throw new Error(`replica: /health says read_replica ${String(health.read_replica)}, not ok`);
    }
    if (!shape.replica && health.read_replica !== undefined) {
      throw new Error(`replica: /health has read_replica without GATELOG_DATABASE_READ_URL`);
    }
    const headers = { authorization: `Bearer ${db.key}`, 'content-type': 'application/json' };
    const createUrl = `${url}/api/request-logs/create/`;
    await rateLoad(createUrl, headers, JSON.stringify(logBody(1)), o.rate, WARMUP_S);

    let running = true;
    // (a) markers: each acknowledged, then polled for in the lists.
    const ackToListed: number[] = [];
    const pollsNeeded: number[] = [];
    let markerErrors = 0;
    let missing = 0;
    const markerTasks: Promise<void>[] = [];
    const runId = crypto.randomBytes(3).toString('hex');
    const marker = async (n: number) => {
      const customer = `marker-${runId}-${n}`;
      const res = await fetch(createUrl, {
        method: 'POST',
        headers,
        body: JSON.stringify({ ...logBody(n), customer_identifier: customer }),
      });
      await res.arrayBuffer();
      if (res.status !== 201) {
        markerErrors++;
        return;
      }
      const acked = performance.now();
      const listUrl = `${url}/api/request-logs/list/?customer_identifier=${customer}&count=false&page_size=1&include_fields=customer_identifier`;
      for (let polls = 1; ; polls++) {
        const { status, body } = await getJson(listUrl, db.key);
        if (status === 200 && (body as { results: unknown[] }).results.length > 0) {
          ackToListed.push(performance.now() - acked);
          pollsNeeded.push(polls);
          return;
        }
        if (status !== 200) markerErrors++;
        if (performance.now() - acked > VISIBLE_MS) {
          missing++;
          return;
        }
        await sleep(POLL_MS);
      }
    };
    const markers = (async () => {
      for (let n = 0; running; n++) {
        markerTasks.push(marker(n));
        await sleep(o.markerMs);
      }
    })();

    // (b) the default list page, one at a time.
    const listMs: number[] = [];
    let listErrors = 0;
    const lists = (async () => {
      const listUrl = `${url}/api/request-logs/list/`;
      while (running) {
        const started = performance.now();
        const { status } = await getJson(listUrl, db.key);
        if (status === 200) listMs.push(performance.now() - started);
        else listErrors++;
        await sleep(o.listPauseMs);
      }
    })();

    // replay_lag on the primary: null when the standby has replayed everything and nothing new came.
    const replayLagMs: number[] = [];
    const lagBytes: number[] = [];
    const sampler = new pg.Client({ connectionString: PG_URL });
    await sampler.connect();
    const sampling = (async () => {
      while (running) {
        const rows = (
          await sampler.query<{ lag_ms: number | null; bytes: string | null }>(
            `select extract(epoch from replay_lag) * 1000 as lag_ms,
               pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn) as bytes from pg_stat_replication`,
          )
        ).rows;
        if (rows.length > 0) {
          replayLagMs.push(Math.max(...rows.map((r) => Number(r.lag_ms ?? 0))));
          lagBytes.push(Math.max(...rows.map((r) => Number(r.bytes ?? 0))));
        }
        await sleep(250);
      }
    })();

    const started = performance.now();
    const create = await rateLoad(createUrl, headers, JSON.stringify(logBody(2)), o.rate, o.seconds);
    const wall = (performance.now() - started) / 1000;
    running = false;
    await Promise.all([markers, lists, sampling]);
    await Promise.all(markerTasks);
    await sampler.end();

    if (missing > 0) process.exitCode = 1;
    if (replayLagMs.length === 0) notes.push(`${shape.name}: pg_stat_replication had no standby while measuring.`);
    if (markerErrors + listErrors > 0) {
      notes.push(`${shape.name}: ${markerErrors} marker and ${listErrors} list calls not answered 200.`);
    }
    const slowMarkers = pollsNeeded.filter((p) => p > 1).length;
    const row = [
      shape.name,
      `${Math.round(create.ok / wall).toLocaleString('en-US')} of ${o.rate.toLocaleString('en-US')}`,
      `${f2(create.p50)} / ${f2(create.p99)}`,
      String(create.errors),
      `${f1(pct(ackToListed, 50))} / ${f1(pct(ackToListed, 99))} / ${f1(ackToListed.length === 0 ? Number.NaN : Math.max(...ackToListed))}`,
      `${slowMarkers} of ${pollsNeeded.length}${missing > 0 ? `, MISSING ${missing}` : ''}`,
      `${f1(pct(listMs, 50))} / ${f1(pct(listMs, 95))} (${listMs.length})`,
      replayLagMs.length === 0 ? '–' : `${f1(pct(replayLagMs, 50))} / ${f1(Math.max(...replayLagMs))}`,
      lagBytes.length === 0 ? '–' : `${Math.round(Math.max(...lagBytes) / 1024).toLocaleString('en-US')}`,
      f2(before),
    ];
    return { row: `| ${row.join(' | ')} |`, notes };
  } finally {
    if (gatelog) {
      const { child } = gatelog;
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
    }
    await db.drop();
  }
}

export async function runReplicaBench(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      rate: { type: 'string', default: '500' },
      seconds: { type: 'string', default: '20' },
      'marker-ms': { type: 'string', default: '250' },
      'list-pause-ms': { type: 'string', default: '100' },
      'replica-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5433/postgres' },
    },
  });
  const o: RunOptions = {
    rate: Number(values.rate),
    seconds: Number(values.seconds),
    markerMs: Number(values['marker-ms']),
    listPauseMs: Number(values['list-pause-ms']),
    replicaUrl: values['replica-url'],
  };
  try {
    await requireStandby(o.replicaUrl);
  } catch (err) {
    console.error((err as Error).message);
    process.exitCode = 1;
    return;
  }
  const startLoad = loadAverage();
  console.log(
    `replica: ${os.cpus().length} cores, load average ${startLoad}; create at ${o.rate}/s for ${o.seconds} s per shape after ${WARMUP_S} s of warm-up`,
  );
  const shapes: Shape[] = [
    { name: 'standby (`GATELOG_DATABASE_READ_URL`)', replica: true },
    { name: 'primary (no read URL)', replica: false },
  ];
  const rows: string[] = [];
  const notes: string[] = [];
  for (const shape of shapes) {
    const result = await measureShape(shape, o);
    rows.push(result.row);
    notes.push(...result.notes);
    console.log(result.row);
  }
  console.log(`
## replica: lists on a hot standby against the primary, create at ${o.rate}/s for ${o.seconds} s

This machine: ${os.cpus().length} cores; load average (1 / 5 / 15 min) ${startLoad} at the start, ${loadAverage()} at
the end. The standby (${o.replicaUrl}) runs on the same machine as the primary, gatelog and this load
generator: it replays every WAL record of the primary cluster in both shapes.
A marker log every ${o.markerMs} ms, polled for every ${POLL_MS} ms from its acknowledgement; a default list page
(last hour, 100 logs, counted) one at a time, ${o.listPauseMs} ms apart.

| lists read from | create logs/s | create p50 / p99 ms | create errors | ack → listed p50 / p99 / max ms | markers needing > 1 list | default list p50 / p95 ms (lists) | replay_lag p50 / max ms | WAL behind, max KiB | load average (1 min) before |
|---|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}
${notes.length > 0 ? `\n${notes.join('\n')}\n` : ''}`);
}
