/**
 * The floor under the admission bench's targets: the least database work an exact, shared admission
 * can do per call, timed in this process at the bench's own rate. A budget and a limit shared by every
 * process (SQLite) or node (PostgreSQL) must be taken where all of them see it, before the call is sent:
 *
 * - SQLite, on a file that a worker thread meanwhile writes logs to (batches of 10 every 20 ms, as the
 *   log writer does at 500 calls/s): one immediate transaction upserting one row; and what exactness
 *   needs at least — the reservation's own row (so that a crash leaves nothing held for ever), its
 *   budget period's and a rate limit's bucket in one commit, the reservations settled every 20 ms.
 * - PostgreSQL: one round trip (`select 1`), and one committed upsert of one row on a connection with
 *   `synchronous_commit = off` (as gatelog's admission pool).
 *
 * A try that finds the write lock held is retried as gatelog's main connection retries it (whenNotBusy).
 * CPU per operation is the process's time with the operations minus its time for the same pacing
 * without them (the worker thread writes in both), so what the timers and the worker cost cancels out.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { whenNotBusy } from '../src/db/sqlite-dialect.js';

export interface Floor {
  name: string;
  cpuMicros: number;
  p50: number;
  p99: number;
}

const PG_URL = process.env.GATELOG_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Runs `op` at `rate` a second for `seconds`, and the same pacing with no op; CPU and latency of `op`. */
async function paced(
  name: string,
  rate: number,
  seconds: number,
  op: () => Promise<unknown> | unknown,
): Promise<Floor> {
  const count = Math.round(rate * seconds);
  const gap = 1000 / rate;
  const run = async (withOp: boolean) => {
    const latencies: number[] = [];
    const pending: Promise<unknown>[] = [];
    const cpu = process.cpuUsage();
    const start = performance.now();
    for (let i = 0; i < count; i++) {
      if (withOp) {
        const t = performance.now();
        pending.push(Promise.resolve(op()).then(() => latencies.push(performance.now() - t)));
      }
      const wait = start + (i + 1) * gap - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
    await Promise.all(pending);
    const used = process.cpuUsage(cpu);
    return { micros: used.user + used.system, latencies: latencies.sort((a, b) => a - b) };
  };
  const idle = await run(false);
  const busy = await run(true);
  const at = (q: number) => busy.latencies[Math.min(busy.latencies.length - 1, Math.floor(busy.latencies.length * q))]!;
  return { name, cpuMicros: Math.max(0, busy.micros - idle.micros) / count, p50: at(0.5), p99: at(0.99) };
}

const WRITER = `
const { workerData } = require('node:worker_threads');
const SQLite = require(workerData.module);
const db = new SQLite(workerData.file);
db.pragma('journal_mode = WAL'); db.pragma('synchronous = NORMAL'); db.pragma('busy_timeout = 5000');
const insert = db.prepare('insert into logs (body) values (?)');
const batch = db.transaction(() => { for (let i = 0; i < 10; i++) insert.run('x'.repeat(3000)); });
setInterval(batch, 20);
`;

/**
 * The least an exact, shared admission does on SQLite (see the module's comment), on tables named with
 * `prefix` in `db`: `admit` takes a reservation, its budget period and a rate-limit bucket in one
 * immediate transaction; `settle` settles the reservations taken since it last ran. `bump` alone is one
 * commit of one row.
 */
export function leastSqliteAdmission(db: SQLite.Database, prefix = '') {
  const [periods, reservations, buckets] = ['periods', 'reservations', 'buckets'].map((t) => `${prefix}${t}`);
  db.exec(`create table if not exists ${periods} (budget text primary key, spent real, reserved real);
    create table if not exists ${reservations} (id text primary key, amount real, expires_at integer);
    create table if not exists ${buckets} (bucket text primary key, at real);
    insert or ignore into ${periods} values ('b', 0, 0)`);
  const bump = db.prepare(
    `insert into ${buckets} values ('k', 1) on conflict (bucket) do update set at = ${buckets}.at + 1`,
  );
  const hold = db.prepare(
    `update ${periods} set reserved = reserved + ? where budget = ? and spent + reserved + ? <= 1e12`,
  );
  const keep = db.prepare(`insert into ${reservations} values (?, ?, ?)`);
  const drop = db.prepare(`delete from ${reservations} where id = ?`);
  const spend = db.prepare(`update ${periods} set spent = spent + ?, reserved = reserved - ? where budget = ?`);
  const one = db.transaction(() => bump.run());
  let serial = 0;
  const held: string[] = [];
  const admit = db.transaction(() => {
    const id = `call-${++serial}`;
    hold.run(0.001, 'b', 0.001);
    keep.run(id, 0.001, Date.now() + 60_000);
    bump.run();
    held.push(id);
  });
  const settleAll = db.transaction((ids: string[]) => {
    for (const id of ids) drop.run(id);
    spend.run(0.0005 * ids.length, 0.001 * ids.length, 'b');
  });
  return {
    bump: () => whenNotBusy(() => one.immediate()),
    admit: () => whenNotBusy(() => admit.immediate()),
    settle: () => {
      const ids = held.splice(0);
      return ids.length === 0 ? undefined : whenNotBusy(() => settleAll.immediate(ids));
    },
  };
}

export async function sqliteFloor(rate: number, seconds: number): Promise<Floor[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatelog-floor-'));
  const file = path.join(dir, 'floor.db');
  const db = new SQLite(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 0');
  db.exec('create table logs (id integer primary key, body text)');
  const admission = leastSqliteAdmission(db);
  const writer = new Worker(WRITER, {
    eval: true,
    workerData: { file, module: createRequire(import.meta.url).resolve('better-sqlite3') },
  });
  const settler = setInterval(() => void admission.settle(), 20);
  try {
    return [
      await paced('SQLite: one commit of one row', rate, seconds, admission.bump),
      await paced(
        'SQLite: a reservation, a period and a bucket in one commit; settled every 20 ms',
        rate,
        seconds,
        admission.admit,
      ),
    ];
  } finally {
    clearInterval(settler);
    await writer.terminate();
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export async function postgresFloor(rate: number, seconds: number): Promise<Floor[]> {
  const pool = new pg.Pool({ connectionString: PG_URL, max: 4, options: '-c synchronous_commit=off' });
  const table = `gatelog_floor_${process.pid}`;
  try {
    await pool.query(`create table ${table} (bucket text primary key, n bigint)`);
    const upsert = `insert into ${table} values ('k', 1) on conflict (bucket) do update set n = ${table}.n + 1 returning n`;
    return [
      await paced('PostgreSQL: one round trip (select 1)', rate, seconds, () => pool.query('select 1')),
      await paced('PostgreSQL: one committed upsert', rate, seconds, () => pool.query(upsert)),
    ];
  } finally {
    await pool.query(`drop table if exists ${table}`);
    await pool.end();
  }
}
