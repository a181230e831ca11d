/**
 * Budgets' spend and reservations in the database (docs/api.md "Budgets"), exact across every node.
 *
 * A reservation is taken by one conditional atomic update of its budget's period — `reserved +
 * amount` only where `spent + reserved + amount` stays within the amount — together with a row of its
 * own that carries its expiry, in the call's one admission statement (admission/admission-ledger.ts):
 * a node that dies between the two cannot leave a reservation without its row. A call's settlement deletes its row and moves its amount from reserved to its actual cost in spent, at
 * once; a reservation whose call outlived its expiry (its node died) is swept the same way with no cost.
 * Whoever deletes a reservation's row — the settlement or the sweep — is the one that gives it back.
 */
import { sql } from 'kysely';
import type { DbHandle } from '../db/connect.js';
import { SqliteFastPath } from '../db/sqlite-fast-path.js';
import { periodKey, type Settlement, type Standing } from './reservation.js';
import { SqliteLedger } from './sqlite-ledger.js';

/** On SQLite, the settlement's and the sweep's statements are prepared once on the main connection. */
export class Ledger extends SqliteFastPath<SqliteLedger> {
  constructor(handle: Pick<DbHandle, 'db' | 'sqlite'>) {
    super(handle, (sqlite) => new SqliteLedger(sqlite));
  }

  /**
   * Ends reservations: each one's row deleted, its amount (if the sweep had not taken it already) given
   * back, its call's cost added to its period's spend — all in one statement (PostgreSQL) or one
   * transaction (SQLite). Each period's spend after them, by periodKey.
   */
  async settle(settlements: readonly Settlement[]): Promise<Map<string, number>> {
    const fast = this.onSqlite((prepared) => prepared.settle(settlements));
    if (fast !== null) return fast;
    const column = <T>(pick: (s: Settlement) => T) => settlements.map(pick);
    const { rows } = await sql<{ budget_id: string; period_start: number; spent_usd: number }>`
      with s as (
        select * from unnest(
          ${column((s) => s.reservation.id)}::text[], ${column((s) => s.reservation.budgetId)}::text[],
          ${column((s) => s.reservation.periodStart)}::bigint[], ${column((s) => s.cost)}::float8[]
        ) as t(id, budget_id, period_start, cost)
      ), gone as (
        delete from budget_reservations r using s where r.id = s.id returning r.budget_id, r.period_start, r.amount_usd
      ), released as (
        select budget_id, period_start, sum(amount_usd) as amount from gone group by budget_id, period_start
      ), spent as (
        select budget_id, period_start, sum(cost) as cost from s group by budget_id, period_start
      )
      insert into budget_periods (budget_id, period_start, spent_usd, reserved_usd)
      select budget_id, period_start, cost, 0 from spent
      on conflict (budget_id, period_start) do update
        set spent_usd = budget_periods.spent_usd + excluded.spent_usd,
            reserved_usd = budget_periods.reserved_usd - coalesce((
              select amount from released r
              where r.budget_id = excluded.budget_id and r.period_start = excluded.period_start
            ), 0)
      returning budget_id, period_start, spent_usd`.execute(this.db);
    return new Map(rows.map((row) => [periodKey(row.budget_id, Number(row.period_start)), Number(row.spent_usd)]));
  }

  /** Gives back every reservation that expired before `now` (its call's node died): how many. */
  async sweep(now: number): Promise<number> {
    const fast = this.onSqlite((prepared) => prepared.sweep(now));
    if (fast !== null) return fast;
    const { rows } = await sql<{ n: number }>`
      with gone as (
        delete from budget_reservations where expires_at < ${now}
        returning budget_id, period_start, amount_usd
      ), sums as (
        select budget_id, period_start, sum(amount_usd) as total, count(*) as n from gone group by budget_id, period_start
      ), given as (
        update budget_periods p set reserved_usd = p.reserved_usd - s.total
        from sums s where p.budget_id = s.budget_id and p.period_start = s.period_start
      )
      select coalesce(sum(n), 0)::int as n from sums`.execute(this.db);
    return Number(rows[0]?.n ?? 0);
  }

  /** The standing of budgets' periods ([budget id, period start] pairs); a period never used stands at 0. */
  async standings(periods: readonly (readonly [string, number])[]): Promise<Map<string, Standing>> {
    const found = new Map<string, Standing>();
    if (periods.length === 0) return found;
    const rows = await this.db
      .selectFrom('budget_periods')
      .select(['budget_id', 'period_start', 'spent_usd', 'reserved_usd'])
      .where((eb) =>
        eb.or(periods.map(([id, start]) => eb.and([eb('budget_id', '=', id), eb('period_start', '=', start)]))),
      )
      .execute();
    for (const row of rows) found.set(periodKey(row.budget_id, Number(row.period_start)), standing(row));
    return found;
  }
}

function standing(row: { spent_usd: number; reserved_usd: number }): Standing {
  return { spent: Number(row.spent_usd), reserved: Math.max(0, Number(row.reserved_usd)) };
}
