/**
 * The ledger's statements on SQLite's main connection, prepared once (ledger.ts): a batch of
 * settlements, or a sweep, in one immediate transaction, without compiling them again on every call.
 * (Reservations are taken with a call's other admission steps: admission/sqlite-admission.ts.)
 */
import type SQLite from 'better-sqlite3';
import { outsideTransactions } from '../db/sqlite-dialect.js';
import { periodKey, type Settlement } from './reservation.js';

export class SqliteLedger {
  private readonly settleTransaction: (settlements: readonly Settlement[]) => Map<string, number>;
  private readonly sweepTransaction: (now: number) => number;

  constructor(sqlite: SQLite.Database) {
    const release = sqlite.prepare('delete from budget_reservations where id = ? returning amount_usd');
    const spend = sqlite.prepare(
      `insert into budget_periods (budget_id, period_start, spent_usd, reserved_usd) values (?, ?, ?, 0)
       on conflict (budget_id, period_start) do update set
         spent_usd = budget_periods.spent_usd + excluded.spent_usd, reserved_usd = budget_periods.reserved_usd - ?
       returning spent_usd`,
    );
    const settle = sqlite.transaction((settlements: readonly Settlement[]) => {
      const after = new Map<string, number>();
      for (const { reservation: r, cost } of settlements) {
        const gone = release.get(r.id) as { amount_usd: number } | undefined;
        const row = spend.get(r.budgetId, r.periodStart, cost, gone?.amount_usd ?? 0) as { spent_usd: number };
        after.set(periodKey(r.budgetId, r.periodStart), row.spent_usd);
      }
      return after;
    });
    const expired = sqlite.prepare(
      'delete from budget_reservations where expires_at < ? returning budget_id, period_start, amount_usd',
    );
    const giveBack = sqlite.prepare(
      'update budget_periods set reserved_usd = reserved_usd - ? where budget_id = ? and period_start = ?',
    );
    const sweep = sqlite.transaction((now: number) => {
      const gone = expired.all(now) as { budget_id: string; period_start: number; amount_usd: number }[];
      for (const r of gone) giveBack.run(r.amount_usd, r.budget_id, r.period_start);
      return gone.length;
    });
    this.settleTransaction = (settlements) => outsideTransactions(sqlite, () => settle.immediate(settlements));
    this.sweepTransaction = (now) => outsideTransactions(sqlite, () => sweep.immediate(now));
  }

  /** Settles them all in one transaction: each period's spend after them, by periodKey. */
  settle(settlements: readonly Settlement[]): Map<string, number> {
    return this.settleTransaction(settlements);
  }

  /** Gives back the reservations that expired before `now`: how many. */
  sweep(now: number): number {
    return this.sweepTransaction(now);
  }
}
