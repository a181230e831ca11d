/**
 * Rollups of the logs stored before rollups existed. The migration that made them (0031) noted the ids
 * of the logs then stored (rollup_backfill: next_id to last_id); logs written since add their own as
 * they are written. This job adds the noted ones, a batch of ids per transaction, in the background —
 * and until it is done every summary reads the logs themselves (rollupsComplete).
 *
 * A noted log deleted before the job reached it has no share in the rollups to take away: removal asks
 * countedInRollups. On PostgreSQL both lock the job's row, so a removal and a batch of the job never
 * see it in two states; several nodes share the work the same way.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../../db/schema.js';
import { onPostgres } from '../../db/rows-insert.js';
import { ROLLUP_SOURCE_COLUMNS, type RollupSource, rollupDeltas } from './rollup-deltas.js';
import { applyRollupDeltas } from './rollup-writes.js';

type Db = Kysely<Database> | Transaction<Database>;

/** The ids still to add, read under a lock of the row on PostgreSQL (null: none). */
async function pending(trx: Db): Promise<{ next: number; last: number } | null> {
  const lock = onPostgres(trx) ? sql` for update` : sql``;
  const { rows } = await sql<{ next_id: number; last_id: number }>`
    select next_id, last_id from rollup_backfill where id = 1${lock}`.execute(trx);
  return rows.length === 0 ? null : { next: Number(rows[0].next_id), last: Number(rows[0].last_id) };
}

/** Whether the rollups hold every stored log. */
export async function rollupsComplete(db: Db): Promise<boolean> {
  const row = await db.selectFrom('rollup_backfill').select('id').executeTakeFirst();
  return row === undefined;
}

/** Of logs about to be removed, those the rollups hold (the others have no share to take away). */
export async function countedInRollups<T extends RollupSource & { id: number | string }>(
  trx: Db,
  logs: readonly T[],
): Promise<T[]> {
  const noted = await pending(trx);
  if (noted === null) return [...logs];
  return logs.filter((l) => Number(l.id) < noted.next || Number(l.id) > noted.last);
}

/** Adds the next `batch` noted ids' logs to the rollups; false once none is left. */
export async function backfillStep(db: Kysely<Database>, batch: number): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const noted = await pending(trx);
    if (noted === null) return false;
    const upTo = Math.min(noted.last, noted.next + batch - 1);
    const logs = (await trx
      .selectFrom('logs')
      .select([...ROLLUP_SOURCE_COLUMNS])
      .where('id', '>=', noted.next)
      .where('id', '<=', upTo)
      .execute()) as RollupSource[];
    await applyRollupDeltas(trx, rollupDeltas(logs.map((l) => ({ ...l, timestamp: Number(l.timestamp) }))));
    if (upTo >= noted.last) {
      await trx.deleteFrom('rollup_backfill').where('id', '=', 1).execute();
      return false;
    }
    await trx
      .updateTable('rollup_backfill')
      .set({ next_id: upTo + 1 })
      .where('id', '=', 1)
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
