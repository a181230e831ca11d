/**
 * Calls' admissions on SQLite's main connection (admission-ledger.ts), by statements prepared once. The
 * admissions asked within one turn of the event loop are taken together: one immediate transaction,
 * each call's steps in a savepoint of their own. A step that does not fit rolls back its call's
 * savepoint only, so a refused call has taken nothing and the others of the batch are unaffected — and
 * every process on the file waits for the write lock in turn. One transaction for the batch rather than
 * one per call: its commit writes the pages that the calls share (a budget's period, a bucket, the
 * reservations' last page) once.
 */
import type SQLite from 'better-sqlite3';
import { outsideTransactions, whenNotBusy } from '../db/sqlite-dialect.js';
import { type Admission, type AdmissionStep, stepResult } from './steps.js';

/** Thrown inside a call's savepoint to roll it back: the index of the step that did not fit. */
class Refused {
  constructor(readonly at: number) {}
}

/** A call waiting for the next batch. */
interface Pending {
  steps: readonly AdmissionStep[];
  resolve(admission: Admission): void;
  reject(err: unknown): void;
}

type Result = { a: number; b: number };

export class SqliteAdmission {
  private readonly takeBatch: (calls: readonly Pending[]) => Admission[];
  private queue: Pending[] = [];
  private running = false;

  constructor(sqlite: SQLite.Database) {
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
    // Inside `batch` below, better-sqlite3 runs this one as a savepoint.
    const one = sqlite.transaction((steps: readonly AdmissionStep[]) => {
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
    const batch = sqlite.transaction((calls: readonly Pending[]) =>
      calls.map((call): Admission => {
        try {
          const rows = one(call.steps);
          return { taken: true, results: rows.map((row, at) => stepResult(call.steps[at]!, row.a, row.b)) };
        } catch (err) {
          if (err instanceof Refused) return { taken: false, refusedAt: err.at };
          throw err; // the whole batch rolls back, and each of its calls fails with the error
        }
      }),
    );
    this.takeBatch = (calls) => outsideTransactions(sqlite, () => batch.immediate(calls));
  }

  /** Takes every step or none, with the other calls of this turn of the event loop. */
  take(steps: readonly AdmissionStep[]): Promise<Admission> {
    return new Promise((resolve, reject) => {
      this.queue.push({ steps, resolve, reject });
      if (this.queue.length === 1 && !this.running) setImmediate(() => void this.drain());
    });
  }

  /**
   * Takes the waiting calls in one transaction, again while the database is busy (whenNotBusy: the
   * event loop free between tries); calls that arrive meanwhile make the next batch.
   */
  private async drain(): Promise<void> {
    this.running = true;
    while (this.queue.length > 0) {
      const calls = this.queue;
      this.queue = [];
      try {
        const admissions = await whenNotBusy(() => this.takeBatch(calls));
        admissions.forEach((admission, i) => calls[i]!.resolve(admission));
      } catch (err) {
        for (const call of calls) call.reject(err);
      }
    }
    this.running = false;
  }
}
