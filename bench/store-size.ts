/**
 * A bench store's size on disk, in all and per million logs, with its build time when known: SQLite's
 * file and WAL after a checkpoint; PostgreSQL's largest tables (pg_total_relation_size: indexes and
 * TOAST included) and the whole database.
 */
import fs from 'node:fs';
import { sql } from 'kysely';
import type { DbHandle } from '../src/db/connect.js';

const MB = 1024 * 1024;

export async function printStoreSize(
  handle: DbHandle,
  rows: number,
  build: { seedSeconds: number; indexSeconds?: number } | undefined,
): Promise<void> {
  const millions = rows / 1_000_000;
  const perMillion = (bytes: number) =>
    `${(bytes / MB).toFixed(0)} MB (${(bytes / MB / millions).toFixed(0)} MB per 1M logs)`;
  if (build) {
    const total = build.seedSeconds + (build.indexSeconds ?? 0);
    console.log(
      `build: logs ${build.seedSeconds.toFixed(0)} s + search index ${build.indexSeconds?.toFixed(0) ?? '?'} s` +
        ` = ${total.toFixed(0)} s (${(total / millions).toFixed(0)} s per 1M logs)`,
    );
  }
  if (handle.sqlite && handle.sqlitePath) {
    handle.sqlite.pragma('wal_checkpoint(TRUNCATE)');
    const size = (file: string) => (fs.existsSync(file) ? fs.statSync(file).size : 0);
    const file = size(handle.sqlitePath);
    const wal = size(`${handle.sqlitePath}-wal`);
    console.log(
      `size on disk: ${perMillion(file + wal)} (file ${(file / MB).toFixed(0)} MB, WAL ${(wal / MB).toFixed(0)} MB)`,
    );
    return;
  }
  const { rows: tables } = await sql<{ name: string; bytes: number }>`
    select c.relname as name, pg_total_relation_size(c.oid) as bytes from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    where c.relkind = 'r' and n.nspname = 'public' order by 2 desc limit 6`.execute(handle.db);
  const { rows: database } = await sql<{ bytes: number }>`select pg_database_size(current_database()) as bytes`.execute(
    handle.db,
  );
  console.log(`size on disk: database ${perMillion(Number(database[0].bytes))}`);
  for (const t of tables) console.log(`  ${t.name}: ${perMillion(Number(t.bytes))}`);
}
