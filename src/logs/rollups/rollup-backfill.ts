/**
 * Rollups of the logs stored before a rollup table existed. The migration that made the table (0031 for
 * log_rollups, 0034 for log_customer_rollups) noted the ids of the logs then stored, in its row of
 * rollup_backfill (next_id to last_id, the row's id the table's backfillId); logs written since add their
 * own as they are written. This job adds the noted ones, a batch of ids per transaction, in the
 * background — and until it is done every summary that would read that table reads the logs themselves
 * (rollupsComplete).
 *
 * A noted log deleted before the job reached it has no share in that table to take away: removal asks
 * removeFromRollups. On PostgreSQL both lock the job's rows, so a removal and a batch of the job never
 * see them in two states; several nodes share the work the same way.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../../db/schema.js';
import { onPostgres } from '../../db/rows-insert.js';
import {
  ROLLUP_KINDS,
  ROLLUP_SOURCE_COLUMNS,
  type RollupKind,
  type RollupSource,
  rollupDeltas,
} from './rollup-deltas.js';
import { applyRollupDeltas } from './rollup-writes.js';

type Db = Kysely<Database> | Transaction<Database>;

interface Noted {
  kind: RollupKind;
  next: number;
  last: number;
}

/** The ids each table still has to add, read under a lock of their rows on PostgreSQL (none: all added). */
async function pending(trx: Db): Promise<Noted[]> {
  const lock = onPostgres(trx) ? sql` for update` : sql``;
  const { rows } = await sql<{ id: number; next_id: number; last_id: number }>`
    select id, next_id, last_id from rollup_backfill order by id${lock}`.execute(trx);
  return rows.flatMap((r) => {
    const kind = ROLLUP_KINDS.find((k) => k.backfillId === Number(r.id));
    return kind ? [{ kind, next: Number(r.next_id), last: Number(r.last_id) }] : [];
  });
}

/** Whether the rollups of `kind` (of every table, without one) hold every stored log. */
export async function rollupsComplete(db: Db, kind?: RollupKind): Promise<boolean> {
  let query = db.selectFrom('rollup_backfill').select('id');
  if (kind) query = query.where('id', '=', kind.backfillId);
  return (await query.executeTakeFirst()) === undefined;
}

/**
 * Takes logs about to be removed out of every rollup table that holds them (a noted log the job has not
 * reached has no share there to take away), in the caller's transaction.
 */
export async function removeFromRollups(trx: Db, logs: readonly (RollupSource & { id: number | string })[]) {
  const noted = await pending(trx);
  const deltas = ROLLUP_KINDS.flatMap((kind) => {
    const range = noted.find((n) => n.kind === kind);
    const counted = range ? logs.filter((l) => Number(l.id) < range.next || Number(l.id) > range.last) : logs;
    return rollupDeltas([], counted, [kind]);
  });
  await applyRollupDeltas(trx, deltas);
}

/** Adds the next `batch` noted ids' logs to the first table with some left; false once none is left. */
export async function backfillStep(db: Kysely<Database>, batch: number): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const [noted, ...others] = await pending(trx);
    if (noted === undefined) return false;
    const upTo = Math.min(noted.last, noted.next + batch - 1);
    const logs = (await trx
      .selectFrom('logs')
      .select([...ROLLUP_SOURCE_COLUMNS])
      .where('id', '>=', noted.next)
      .where('id', '<=', upTo)
      .execute()) as RollupSource[];
    const added = logs.map((l) => ({ ...l, timestamp: Number(l.timestamp) }));
    await applyRollupDeltas(trx, rollupDeltas(added, [], [noted.kind]));
    const id = noted.kind.backfillId;
    if (upTo >= noted.last) {
      await trx.deleteFrom('rollup_backfill').where('id', '=', id).execute();
      return others.length > 0;
    }
    await trx
      .updateTable('rollup_backfill')
      .set({ next_id: upTo + 1 })
      .where('id', '=', id)
      .execute();
    return true;
  });
}

/** Runs backfillStep until it is done, a batch at a time, yielding to other work between batches. */
export class RollupBackfill {
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly logger: FastifyBaseLogger,
    private readonly batch = 2000,
  ) {}

  start(): void {
    this.running ??= this.run();
  }

  /** Finishes the batch under way, and starts no other. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  private async run(): Promise<void> {
    let batches = 0;
    try {
      while (!this.stopped && (await backfillStep(this.db, this.batch))) {
        batches += 1;
        await new Promise((resolve) => setImmediate(resolve));
      }
      if (batches > 0 && !this.stopped) this.logger.info({ batches }, 'rollups now hold every stored log');
    } catch (err) {
      // The next start tries again; summaries read the logs meanwhile.
      this.logger.error({ err }, 'filling the rollups of older logs failed');
    }
  }
}
