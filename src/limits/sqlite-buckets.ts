/**
 * The buckets' statements on SQLite's main connection, prepared once (buckets.ts): the same SQL as
 * through Kysely, without compiling it and preparing it again on every call.
 */
import type SQLite from 'better-sqlite3';
import type { BucketState, Draw } from './draw.js';

export class SqliteBuckets {
  private readonly drawStatement: SQLite.Statement;
  private readonly adjustAll: SQLite.Transaction<(changes: ReadonlyMap<string, Draw>) => void>;

  constructor(private readonly sqlite: SQLite.Database) {
    this.drawStatement = sqlite.prepare(
      `insert into rate_buckets (bucket, requests_at, tokens_at) values (@bucket, @now + @rq, @now + @tk)
       on conflict (bucket) do update set
         requests_at = max(rate_buckets.requests_at, @now) + @rq,
         tokens_at = max(rate_buckets.tokens_at, @now) + @tk
       where max(rate_buckets.requests_at, @now) + @rq <= @limit and max(rate_buckets.tokens_at, @now) + @tk <= @limit
       returning requests_at, tokens_at`,
    );
    const adjust = sqlite.prepare(
      'update rate_buckets set requests_at = requests_at + ?, tokens_at = tokens_at + ? where bucket = ?',
    );
    this.adjustAll = sqlite.transaction((changes: ReadonlyMap<string, Draw>) => {
      for (const [bucket, change] of changes) adjust.run(change.requestsMs, change.tokensMs, bucket);
    });
  }

  draw(bucket: string, now: number, draw: Draw, limit: number): BucketState | null {
    this.alone();
    const row = this.drawStatement.get({ bucket, now, rq: draw.requestsMs, tk: draw.tokensMs, limit }) as
      { requests_at: number; tokens_at: number } | undefined;
    return row === undefined ? null : { requestsAt: row.requests_at, tokensAt: row.tokens_at };
  }

  /** Moves each bucket's clocks by its change, in one transaction. */
  adjust(changes: ReadonlyMap<string, Draw>): void {
    this.alone();
    this.adjustAll.immediate(changes);
  }

  /**
   * A statement run while another transaction is open on this connection (Kysely's, between two of its
   * statements) would become part of it: it waits for that one to end, as for another's lock.
   */
  private alone(): void {
    if (this.sqlite.inTransaction) throw Object.assign(new Error('a transaction is open'), { code: 'SQLITE_BUSY' });
  }
}
