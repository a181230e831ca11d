/**
 * The ledger's statements on SQLite's main connection, prepared once (ledger.ts): a reservation and a
 * settlement each one immediate transaction of two prepared statements, without compiling them again
 * on every call.
 */
import type SQLite from 'better-sqlite3';
import { periodKey, type Reservation, type Settlement, type Standing } from './reservation.js';

type StandingRow = { spent_usd: number; reserved_usd: number };

export class SqliteLedger {
  private readonly reserveTransaction: (r: Reservation, limit: number) => StandingRow | undefined;
  private readonly settleTransaction: (settlements: readonly Settlement[]) => Map<string, number>;
  private readonly sweepTransaction: (now: number) => number;

  constructor(sqlite: SQLite.Database) {
    const hold = sqlite.prepare(
      `insert into budget_periods (budget_id, period_start, spent_usd, reserved_usd) values (?, ?, 0, ?)
       on conflict (budget_id, period_start) do update set reserved_usd = budget_periods.reserved_usd + excluded.reserved_usd
       where budget_periods.spent_usd + budget_periods.reserved_usd + excluded.reserved_usd <= ?
       returning spent_usd, reserved_usd`,
    );
    const keep = sqlite.prepare(
      'insert into budget_reservations (id, budget_id, period_start, amount_usd, expires_at) values (?, ?, ?, ?, ?)',
    );
    const release = sqlite.prepare('delete from budget_reservations where id = ? returning amount_usd');
    const spend = sqlite.prepare(
      `insert into budget_periods (budget_id, period_start, spent_usd, reserved_usd) values (?, ?, ?, 0)
       on conflict (budget_id, period_start) do update set
         spent_usd = budget_periods.spent_usd + excluded.spent_usd, reserved_usd = budget_periods.reserved_usd - ?
       returning spent_usd`,
    );
    const reserve = sqlite.transaction((r: Reservation, limit: number) => {
      const row = hold.get(r.budgetId, r.periodStart, r.amount, limit) as StandingRow | undefined;
      if (row !== undefined) keep.run(r.id, r.budgetId, r.periodStart, r.amount, r.expiresAt);
      return row;
    });
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
    // Another transaction open on this connection (Kysely's, between two of its statements) would take
    // these statements into itself as a savepoint: they wait for it to end, as for another's lock.
    const alone = <T>(run: () => T): T => {
      if (sqlite.inTransaction) throw Object.assign(new Error('a transaction is open'), { code: 'SQLITE_BUSY' });
      return run();
    };
    this.reserveTransaction = (r, limit) => alone(() => reserve.immediate(r, limit));
    this.settleTransaction = (settlements) => alone(() => settle.immediate(settlements));
    this.sweepTransaction = (now) => alone(() => sweep.immediate(now));
  }

  reserve(r: Reservation, limit: number): Standing | null {
    const row = this.reserveTransaction(r, limit);
    return row === undefined ? null : { spent: row.spent_usd, reserved: Math.max(0, row.reserved_usd) };
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
