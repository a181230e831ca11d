/**
 * Rate-limit buckets, shared by every node through the database (docs/api.md "Rate limits").
 *
 * Each bucket keeps, for its requests and for its tokens, the time at which everything drawn so far will
 * have drained (the generic cell rate algorithm): a limit of N a minute drains one every 60000/N ms,
 * and a call may be drawn while what is outstanding, itself included, drains within a minute. A
 * full bucket therefore takes a minute's worth at once, then one more per interval — the bucket of
 * OpenAI's own limits, whose headers gatelog answers with.
 *
 * A draw is one conditional upsert — its update holds only when the call fits — taken with the call's
 * other admission steps (admission/admission-ledger.ts), so two nodes (or two processes on one SQLite
 * file) drawing at once are serialised by the database's row lock, and a limit is never passed.
 */
import { sql } from 'kysely';
import type { DbHandle } from '../db/connect.js';
import { SqliteFastPath } from '../db/sqlite-fast-path.js';
import type { BucketState, Draw } from './draw.js';
import { SqliteBuckets } from './sqlite-buckets.js';

/** On SQLite, the adjustments' statements are prepared once on the main connection. */
export class Buckets extends SqliteFastPath<SqliteBuckets> {
  constructor(handle: Pick<DbHandle, 'db' | 'sqlite'>) {
    super(handle, (sqlite) => new SqliteBuckets(sqlite));
  }

  /** A bucket's clocks as they stand; a bucket never drawn from is empty (drained at `now`). */
  async peek(bucket: string, now: number): Promise<BucketState> {
    const row = await this.db
      .selectFrom('rate_buckets')
      .select(['requests_at', 'tokens_at'])
      .where('bucket', '=', bucket)
      .executeTakeFirst();
    return row === undefined
      ? { requestsAt: now, tokensAt: now }
      : { requestsAt: Number(row.requests_at), tokensAt: Number(row.tokens_at) };
  }

  /**
   * Moves buckets' clocks back (a draw undone, or tokens reserved and not used) or on (tokens used beyond
   * the reservation). A clock moved back past the present leaves the bucket empty, never in credit: the
   * next draw starts from the present (greatest(at, now)).
   */
  async adjust(changes: ReadonlyMap<string, Draw>): Promise<void> {
    if (changes.size === 0) return;
    const fast = this.onSqlite((prepared) => prepared.adjust(changes));
    if (fast !== null) return fast;
    const entries = [...changes];
    await sql`
      update rate_buckets b set requests_at = b.requests_at + c.rq, tokens_at = b.tokens_at + c.tk
      from unnest(
        ${entries.map(([bucket]) => bucket)}::text[], ${entries.map(([, c]) => c.requestsMs)}::float8[],
        ${entries.map(([, c]) => c.tokensMs)}::float8[]
      ) as c(bucket, rq, tk)
      where b.bucket = c.bucket`.execute(this.db);
  }

  /** Deletes buckets that have fully drained before `before` (a customer seen once leaves no row behind). */
  async sweep(before: number): Promise<number> {
    const result = await this.db
      .deleteFrom('rate_buckets')
      .where('requests_at', '<', before)
      .where('tokens_at', '<', before)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
