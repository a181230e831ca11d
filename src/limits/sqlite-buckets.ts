/**
 * The buckets' corrections on SQLite's main connection, prepared once (buckets.ts): the same SQL as
 * through Kysely, without compiling it and preparing it again on every batch. (Draws are taken with a
 * call's other admission steps: admission/sqlite-admission.ts.)
 */
import type SQLite from 'better-sqlite3';
import { outsideTransactions } from '../db/sqlite-dialect.js';
import type { Draw } from './draw.js';

export class SqliteBuckets {
  private readonly adjustAll: SQLite.Transaction<(changes: ReadonlyMap<string, Draw>) => void>;

  constructor(private readonly sqlite: SQLite.Database) {
    const adjust = sqlite.prepare(
      'update rate_buckets set requests_at = requests_at + ?, tokens_at = tokens_at + ? where bucket = ?',
    );
    this.adjustAll = sqlite.transaction((changes: ReadonlyMap<string, Draw>) => {
      for (const [bucket, change] of changes) adjust.run(change.requestsMs, change.tokensMs, bucket);
    });
  }

  /** Moves each bucket's clocks by its change, in one transaction. */
  adjust(changes: ReadonlyMap<string, Draw>): void {
    outsideTransactions(this.sqlite, () => this.adjustAll.immediate(changes));
  }
}
