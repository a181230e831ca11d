/**
 * A call's admission in one go (docs/api.md "Keys, budgets and rate limits"): the reservation of every
 * budget that applies to it and the draw from every rate limit's bucket, taken by one statement on
 * PostgreSQL — one round trip, whatever the number of steps — and by one transaction on SQLite.
 *
 * On PostgreSQL the statement chains data-modifying WITHs, each step's upsert run only when the step
 * before it returned its row (`where exists`): the first step that does not fit stops the rest. The
 * steps before it are then given back (a settlement at cost 0, a draw moved back) — a refusal's second
 * round trip; an admitted call has only the one. On SQLite the refused transaction is rolled back.
 * Either way a refused call holds nothing.
 */
import { type RawBuilder, sql } from 'kysely';
import type { DbHandle } from '../db/connect.js';
import type { Buckets } from '../limits/buckets.js';
import type { Ledger } from '../budgets/ledger.js';
import type { Draw } from '../limits/draw.js';
import {
  type Admission,
  type AdmissionStep,
  type BucketStep,
  type BudgetStep,
  EPSILON_USD,
  stepResult,
} from './steps.js';
import { SqliteAdmission } from './sqlite-admission.js';

export class AdmissionLedger {
  private readonly sqlite: SqliteAdmission | null;

  constructor(
    private readonly handle: Pick<DbHandle, 'holds' | 'sqlite'>,
    private readonly ledger: Ledger,
    private readonly buckets: Buckets,
  ) {
    this.sqlite = handle.sqlite === null ? null : new SqliteAdmission(handle.sqlite);
  }

  /** Takes every step, or none: the first that does not fit is named. */
  async take(steps: readonly AdmissionStep[]): Promise<Admission> {
    if (steps.length === 0) return { taken: true, results: [] };
    const tolerant = steps.map((step) =>
      step.kind === 'budget' ? { ...step, limit: step.limit + EPSILON_USD } : step,
    );
    // A reservation larger than its whole budget never fits: nothing to ask the database.
    const hopeless = tolerant.findIndex((step) => step.kind === 'budget' && step.reservation.amount > step.limit);
    if (hopeless !== -1) return { taken: false, refusedAt: hopeless };
    const fast = this.sqlite;
    if (fast !== null) return fast.take(tolerant);
    const { rows } = await statement(tolerant).execute(this.handle.holds);
    const results = new Map(rows.map((row) => [Number(row.i), row]));
    const refusedAt = tolerant.findIndex((_, i) => !results.has(i));
    if (refusedAt === -1) {
      return {
        taken: true,
        results: tolerant.map((step, i) => {
          const row = results.get(i)!;
          return stepResult(step, Number(row.a), Number(row.b));
        }),
      };
    }
    await this.giveBack(tolerant.slice(0, refusedAt));
    return { taken: false, refusedAt };
  }

  /** Undoes steps taken before a refusal (PostgreSQL): reservations settled at no cost, draws moved back. */
  private async giveBack(taken: readonly AdmissionStep[]): Promise<void> {
    const reservations = taken.filter((s): s is BudgetStep => s.kind === 'budget');
    const draws = new Map<string, Draw>();
    for (const s of taken) {
      if (s.kind === 'bucket') draws.set(s.bucket, { requestsMs: -s.draw.requestsMs, tokensMs: -s.draw.tokensMs });
    }
    await Promise.all([
      reservations.length > 0
        ? this.ledger.settle(reservations.map((s) => ({ reservation: s.reservation, cost: 0 })))
        : null,
      this.buckets.adjust(draws),
    ]);
  }
}

/** The one statement of `steps` on PostgreSQL: a row (i, a, b) for each step taken. */
function statement(steps: readonly AdmissionStep[]): RawBuilder<{ i: number; a: number; b: number }> {
  const parts: RawBuilder<unknown>[] = [];
  for (const [i, step] of steps.entries()) {
    // Every step after the first only when the one before it was taken.
    const after = i === 0 ? sql`` : sql`where exists (select 1 from ${sql.ref(`s${i - 1}`)})`;
    parts.push(step.kind === 'budget' ? budgetPart(i, step, after) : bucketPart(i, step, after));
  }
  const results = steps.map((_, i) => sql`select ${i}::int as i, a, b from ${sql.ref(`s${i}`)}`);
  return sql<{ i: number; a: number; b: number }>`with ${sql.join(parts)} ${sql.join(results, sql` union all `)}`;
}

function budgetPart(i: number, { reservation: r, limit }: BudgetStep, after: RawBuilder<unknown>) {
  const held = sql.ref(`s${i}`);
  return sql`${held} as (
      insert into budget_periods (budget_id, period_start, spent_usd, reserved_usd)
      select ${r.budgetId}::text, ${r.periodStart}::bigint, 0::float8, ${r.amount}::float8 ${after}
      on conflict (budget_id, period_start) do update
        set reserved_usd = budget_periods.reserved_usd + excluded.reserved_usd
        where budget_periods.spent_usd + budget_periods.reserved_usd + excluded.reserved_usd <= ${limit}::float8
      returning spent_usd::float8 as a, reserved_usd::float8 as b
    ), ${sql.ref(`k${i}`)} as (
      insert into budget_reservations (id, budget_id, period_start, amount_usd, expires_at)
      select ${r.id}::text, ${r.budgetId}::text, ${r.periodStart}::bigint, ${r.amount}::float8, ${r.expiresAt}::bigint
      from ${held}
    )`;
}

function bucketPart(i: number, { bucket, now, draw, limit }: BucketStep, after: RawBuilder<unknown>) {
  const rq = sql`${draw.requestsMs}::float8`;
  const tk = sql`${draw.tokensMs}::float8`;
  const at = sql`${now}::float8`;
  const requests = sql`greatest(rate_buckets.requests_at, ${at}) + ${rq}`;
  const tokens = sql`greatest(rate_buckets.tokens_at, ${at}) + ${tk}`;
  return sql`${sql.ref(`s${i}`)} as (
      insert into rate_buckets (bucket, requests_at, tokens_at)
      select ${bucket}::text, ${at} + ${rq}, ${at} + ${tk} ${after}
      on conflict (bucket) do update set requests_at = ${requests}, tokens_at = ${tokens}
        where ${requests} <= ${limit}::float8 and ${tokens} <= ${limit}::float8
      returning requests_at::float8 as a, tokens_at::float8 as b
    )`;
}
