/**
 * The log-writing worker thread for PostgreSQL (thread-inserter.ts): its own small pool, each batch
 * written by the same inserter the event loop would use (KyselyInserter: one transaction, a month's
 * partition made when a log needs one, planner statistics refreshed as the logs grow).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Kysely, PostgresDialect } from 'kysely';
import { mainPool } from '../../db/connect.js';
import type { Database } from '../../db/schema.js';
import { ANALYZE_EVERY_LOGS, KyselyInserter } from './inserter.js';
import { replyOf, type WriteRequest } from './thread-inserter.js';

// Two connections: a batch's transaction, and the ANALYZE that may run beside it.
const db = new Kysely<Database>({
  dialect: new PostgresDialect({ pool: mainPool((workerData as { url: string }).url, 2) }),
});
const inserter = new KyselyInserter(db, ANALYZE_EVERY_LOGS);

parentPort!.on('message', ({ id, logs }: WriteRequest) => {
  inserter.insert(logs).then(
    () => parentPort!.postMessage(replyOf(id, undefined)),
    (err: unknown) => parentPort!.postMessage(replyOf(id, err ?? new Error('unknown'))),
  );
});
