/**
 * The dead-letter store: a log the database refused while answering (a bad row, not an outage) is kept
 * here whole, as JSON text (which any text column takes: control characters are escaped), with the
 * database's error. It survives restarts; /health and the service log report the count.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { NewLog } from './new-log.js';

export class DeadLetterStore {
  private stored = 0;

  constructor(private readonly db: Kysely<Database>) {}

  /** Reads how many dead letters earlier runs left. */
  async init(): Promise<void> {
    const row = await this.db
      .selectFrom('dead_letters')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    this.stored = Number(row.n);
  }

  /** Dead letters stored, this run and earlier ones. */
  get count(): number {
    return this.stored;
  }

  /** Some were removed (the retention sweep). */
  forget(removed: number): void {
    this.stored = Math.max(0, this.stored - removed);
  }

  async keep(logs: readonly NewLog[], error: unknown): Promise<void> {
    const message = String((error as { message?: unknown } | null)?.message ?? error).slice(0, 2000);
    const now = Date.now();
    await this.db
      .insertInto('dead_letters')
      .values(
        logs.map((log) => ({
          unique_id: log.row.unique_id,
          organization_id: log.row.organization_id,
          error: message,
          log: JSON.stringify(log),
          created_at: now,
        })),
      )
      .execute();
    this.stored += logs.length;
  }
}
