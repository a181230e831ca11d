/**
 * A call's admission on SQLite's main connection (admission-ledger.ts): every step in one immediate
 * transaction of statements prepared once. A step that does not fit rolls the transaction back, so a
 * refused call has taken nothing — and every process on the file waits for the write lock in turn.
 */
import type SQLite from 'better-sqlite3';
import { outsideTransactions } from '../db/sqlite-dialect.js';
import { type Admission, type AdmissionStep, stepResult } from './steps.js';

/** Thrown inside the transaction to roll it back: the index of the step that did not fit. */
class Refused {
  constructor(readonly at: number) {}
}

type Result = { a: number; b: number };

export class SqliteAdmission {
  private readonly takeAll: (steps: readonly AdmissionStep[]) => Result[];

  constructor(private readonly sqlite: SQLite.Database) {
    const hold = sqlite.prepare(
      `insert into budget_periods (budget_id, period_start, spent_usd, reserved_usd) values (?, ?, 0, ?)
       on conflict (budget_id, period_start) do update set reserved_usd = budget_periods.reserved_usd + excluded.reserved_usd
       where budget_periods.spent_usd + budget_periods.reserved_usd + excluded.reserved_usd <= ?
       returning spent_usd as a, reserved_usd as b`,
    );
    const keep = sqlite.prepare(
      'insert into budget_reservations (id, budget_id, period_start, amount_usd, expires_at) values (?, ?, ?, ?, ?)',
    );
    const draw = sqlite.prepare(
      `insert into rate_buckets (bucket, requests_at, tokens_at) values (@bucket, @now + @rq, @now + @tk)
       on conflict (bucket) do update set
         requests_at = max(rate_buckets.requests_at, @now) + @rq,
         tokens_at = max(rate_buckets.tokens_at, @now) + @tk
       where max(rate_buckets.requests_at, @now) + @rq <= @limit and max(rate_buckets.tokens_at, @now) + @tk <= @limit
       returning requests_at as a, tokens_at as b`,
    );
    const all = sqlite.transaction((steps: readonly AdmissionStep[]) => {
      const results: Result[] = [];
      for (const [at, step] of steps.entries()) {
        let row: Result | undefined;
        if (step.kind === 'budget') {
          const r = step.reservation;
          row = hold.get(r.budgetId, r.periodStart, r.amount, step.limit) as Result | undefined;
          if (row !== undefined) keep.run(r.id, r.budgetId, r.periodStart, r.amount, r.expiresAt);
        } else {
          const { bucket, now, draw: d, limit } = step;
          row = draw.get({ bucket, now, rq: d.requestsMs, tk: d.tokensMs, limit }) as Result | undefined;
        }
        if (row === undefined) throw new Refused(at);
        results.push(row);
      }
      return results;
    });
    this.takeAll = (steps) => all.immediate(steps);
  }

  /** Takes every step or none (throws SQLITE_BUSY while another holds the write lock: whenNotBusy). */
  take(steps: readonly AdmissionStep[]): Admission {
    try {
      const rows = outsideTransactions(this.sqlite, () => this.takeAll(steps));
      return {
        taken: true,
        results: rows.map((row, at) => stepResult(steps[at]!, row.a, row.b)),
      };
    } catch (err) {
      if (err instanceof Refused) return { taken: false, refusedAt: err.at };
      throw err;
    }
  }
}
