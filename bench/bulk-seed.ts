/**
 * The seed of a large bench store (10M logs over 30 days), written in large batches: the same logs and
 * scores as seedLogs (seedGenerator), with the metadata rows, facet counts and rollups gatelog writes
 * beside them — counted per batch (facetDeltas, rollupDeltas: a batch of tens of thousands of logs in
 * time order adds up to few rows) and upserted, so buckets a batch boundary splits are summed right.
 *
 * SQLite: the log writer's own prepared statements (bulk-seed-sqlite.ts). PostgreSQL: COPY for logs,
 * metadata rows and scores (bulk-seed-pg.ts). On a fresh store both create the loaded tables'
 * secondary indexes after the load (one sort each rather than a b-tree insert per row).
 */
import crypto from 'node:crypto';
import type { KeyIdentity } from '../src/auth/authenticator.js';
import type { DbHandle } from '../src/db/connect.js';
import type { NewLog } from '../src/logs/write/new-log.js';
import { createMonthsOf } from '../src/db/log-partitions.js';
import { postgresBatches } from './bulk-seed-pg.js';
import { sqliteBatches } from './bulk-seed-sqlite.js';
import { SEED_CHUNK, seedGenerator } from './seed-logs.js';

/** Logs per batch (one transaction): whole chunks of the seed. */
const BATCH = 4 * SEED_CHUNK;

/** A score drawn for the batch's `index`-th log. */
interface DrawnScore {
  index: number;
  evaluatorId: string;
  numerical: number;
  value: number;
}

export interface ScoreRow {
  id: string;
  organization_id: string;
  log_id: number;
  evaluator_id: string;
  numerical_value: number;
  boolean_value: null;
  score_value: number;
  created_at: number;
}

export async function bulkSeedLogs(
  handle: DbHandle,
  auth: KeyIdentity,
  testAuth: KeyIdentity,
  evaluatorIds: string[],
  rows: number,
  now: number,
  days: number,
  /** The PostgreSQL database's URL (its COPY runs on a connection of its own). */
  postgresUrl: string,
  onProgress: (done: number) => void,
): Promise<void> {
  await createSeedMonths(handle, now, days);
  const seed = seedGenerator(auth, testAuth, evaluatorIds, rows, now, days);
  const writer = handle.sqlite ? sqliteBatches(handle.sqlite) : await postgresBatches(postgresUrl);
  for (let done = 0; done < rows; done += BATCH) {
    const logs: NewLog[] = [];
    const drawn: DrawnScore[] = [];
    // Chunk by chunk, each chunk's scores drawn after its logs, as seedLogs draws them.
    for (let from = done; from < Math.min(rows, done + BATCH); from += SEED_CHUNK) {
      const chunk = seed.logs(from, from + SEED_CHUNK);
      for (const k of seed.scored(chunk.map((_, k) => k))) drawn.push({ index: logs.length + k, ...seed.score() });
      logs.push(...chunk);
    }
    // The scores once the batch's logs have their ids (in the batch's order).
    const scoresOf = (ids: number[]): ScoreRow[] =>
      drawn.map((s) => ({
        id: crypto.randomUUID(),
        organization_id: auth.organizationId,
        log_id: ids[s.index],
        evaluator_id: s.evaluatorId,
        numerical_value: s.numerical,
        boolean_value: null,
        score_value: s.value,
        created_at: now,
      }));
    await writer.write(logs, scoresOf);
    onProgress(Math.min(rows, done + BATCH));
  }
  await writer.finish();
}

/** Writes one batch; `finish` once every batch is written. */
export interface BatchWriter {
  write: (logs: NewLog[], scoresOf: (ids: number[]) => ScoreRow[]) => Promise<void>;
  finish: () => Promise<void>;
}

/** Seconds since `since` (performance.now()), for the build's log lines. */
export const elapsed = (since: number) => ((performance.now() - since) / 1000).toFixed(0);

/** On PostgreSQL, the month partitions of the logs the seed spreads over `days` before `now`. */
export async function createSeedMonths(handle: DbHandle, now: number, days: number): Promise<void> {
  if (handle.sqlite) return;
  const DAY = 24 * 3600_000;
  await createMonthsOf(handle.db, [...Array.from({ length: days + 1 }, (_, d) => now - d * DAY), now - days * DAY]);
}
