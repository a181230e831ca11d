/**
 * Budgets applied to proxied calls (docs/api.md "Budgets"): every budget that applies to a call — its
 * key's, its customer's, its organization's — must hold the call's reservation, its highest possible
 * cost, before anything is sent; the reservation is replaced by the call's cost when it ends. The
 * reservations live in the database (ledger.ts), so that every node sees them, and carry an expiry so
 * that a node that dies leaves none held for ever: each node sweeps the expired ones.
 */
import { AppError } from '../errors.js';
import type { Budget, BudgetStore } from './budget-store.js';
import type { Ledger } from './ledger.js';
import { periodKey, type Standing } from './reservation.js';
import { BatchedLater } from '../util/batched-later.js';
import { periodAt } from './period.js';
import type { BudgetStep } from '../admission/steps.js';

/** How long a settlement waits for others to be written with: calls ending together share a transaction. */
const SETTLE_AFTER_MS = 20;

export interface BudgetCaller {
  keyId: string;
  organizationId: string;
}

/** What a budget's period crossed when a call's cost was added: for its alerts. */
export interface Crossing {
  budget: Budget;
  periodStart: number;
  spentBefore: number;
  spentAfter: number;
}

/** A refusal that names the budget: 402 budget_exceeded with `error.budget`. */
export class BudgetExceeded extends AppError {
  constructor(
    readonly budget: { id: string; name: string; remaining_usd: number },
    amount: number,
  ) {
    super(
      402,
      'budget_exceeded',
      `The budget '${budget.name}' has $${budget.remaining_usd.toFixed(6)} left for this period; this call may cost up to $${amount.toFixed(6)}.`,
    );
  }

  override toEnvelope() {
    const envelope = super.toEnvelope();
    return { ...envelope, error: { ...envelope.error, budget: this.budget } };
  }
}

export class BudgetKeeper {
  /** Settlements not yet written, a batch at a time: a stop waits for them. */
  private readonly settlements = new BatchedLater<{ held: readonly Held[]; cost: number }>(
    (batch) => this.settleBatch(batch),
    SETTLE_AFTER_MS,
  );
  private sweeper: NodeJS.Timeout | null = null;
  /** Told of each threshold a period may have crossed (the alerts' queue). */
  onSpend: ((crossing: Crossing) => Promise<void>) | null = null;

  constructor(
    readonly store: BudgetStore,
    readonly ledger: Ledger,
    /** How long a reservation is held at most: a call still running then has its amount given back. */
    private readonly holdMs: number,
  ) {}

  /** The budgets that apply to a call of `caller` for `customer`. */
  async applying(caller: BudgetCaller, customer: string | null): Promise<Budget[]> {
    const budgets = await this.store.cached(caller.organizationId);
    if (budgets.length === 0) return budgets;
    return budgets.filter(
      ({ appliesTo: { type, value } }) =>
        (type === 'key' && value === caller.keyId) ||
        (type === 'customer' && value === customer) ||
        type === 'organization',
    );
  }

  /**
   * The steps that reserve `amount` USD of every budget for the call `callId` (taken all or none with the
   * call's other admission steps: AdmissionLedger). An unknown amount — a model without a price (403
   * model_not_priced), or a transcription whose audio's length could not be read (403 cost_unknown) — is
   * refused unless every budget allows unpriced calls; it then reserves nothing.
   */
  plan(
    budgets: readonly Budget[],
    callId: string,
    amount: number | null,
    model: string,
    unknown: 'price' | 'audio' = 'price',
  ): BudgetPlan {
    const strict = amount === null ? budgets.find((b) => !b.allowUnpriced) : undefined;
    if (strict !== undefined && unknown === 'audio') {
      throw new AppError(
        403,
        'cost_unknown',
        `The length of this audio file could not be read, so its cost is not known before the call and the budget '${strict.name}' cannot hold it; allow unpriced calls on the budget to let such calls through.`,
        'file',
      );
    }
    if (strict !== undefined) {
      throw new AppError(
        403,
        'model_not_priced',
        `The model '${model}' has no known price, so the budget '${strict.name}' cannot hold its calls; give it a price (GATELOG_PRICING_FILE) or allow unpriced calls on the budget.`,
        'model',
      );
    }
    const now = Date.now();
    const steps: BudgetStep[] = [];
    const held: Held[] = [];
    for (const budget of budgets) {
      const periodStart = periodAt(budget.period, budget.tz, now).start;
      const reservation = {
        id: `${callId}:${budget.id}`,
        budgetId: budget.id,
        periodStart,
        amount: amount ?? 0,
        expiresAt: now + this.holdMs,
      };
      steps.push({ kind: 'budget', reservation, limit: budget.amountUsd });
      held.push({ ...reservation, budget });
    }
    return { steps, held };
  }

  /** What a call holds once its plan's steps were taken. */
  lease(plan: BudgetPlan): BudgetLease {
    return new BudgetLease(this, plan.held);
  }

  /** Ends a call's reservations with its cost, in the background of its log (batched with others'). */
  settleLater(held: readonly Held[], cost: number): void {
    this.settlements.add({ held, cost });
  }

  settled(): Promise<void> {
    return this.settlements.settled();
  }

  private async settleBatch(batch: readonly { held: readonly Held[]; cost: number }[]): Promise<void> {
    const settlements = batch.flatMap(({ held, cost }) => held.map((h) => ({ reservation: h, cost })));
    if (settlements.length === 0) return;
    // A batch that fails leaves its reservations to expire: their amounts come back late, never twice.
    const spentAfter = await this.ledger.settle(settlements);
    if (this.onSpend === null) return;
    // Each period once, with what the batch added to it: the thresholds it crossed.
    const added = new Map<string, { held: Held; cost: number }>();
    for (const { reservation, cost } of settlements) {
      const key = periodKey(reservation.budgetId, reservation.periodStart);
      const sum = added.get(key);
      added.set(key, { held: reservation, cost: (sum?.cost ?? 0) + cost });
    }
    for (const [key, { held, cost }] of added) {
      const after = spentAfter.get(key);
      if (cost > 0 && after !== undefined) {
        await this.onSpend({
          budget: held.budget,
          periodStart: held.periodStart,
          spentBefore: after - cost,
          spentAfter: after,
        });
      }
    }
  }

  /** Sweeps expired reservations every `everyMs` until stop(). */
  start(everyMs: number): void {
    this.sweeper ??= setInterval(() => {
      this.ledger.sweep(Date.now()).catch(() => undefined);
    }, everyMs);
    this.sweeper.unref();
  }

  stop(): void {
    if (this.sweeper !== null) clearInterval(this.sweeper);
    this.sweeper = null;
  }

  /** Each budget with its current period's standing. */
  async standings(budgets: readonly Budget[], now = Date.now()): Promise<Map<string, Standing>> {
    const periods = budgets.map((b) => [b.id, periodAt(b.period, b.tz, now).start] as const);
    const found = await this.ledger.standings(periods);
    return new Map(periods.map(([id, start]) => [id, found.get(periodKey(id, start)) ?? { spent: 0, reserved: 0 }]));
  }

  /** The refusal of the plan's step `at`, which did not fit: 402 budget_exceeded naming its budget. */
  async refusal(plan: BudgetPlan, at: number): Promise<AppError> {
    const { budget, periodStart } = plan.held[at]!;
    const amount = plan.steps[at]!.reservation.amount;
    const found = await this.ledger.standings([[budget.id, periodStart]]);
    const standing = found.get(periodKey(budget.id, periodStart)) ?? { spent: 0, reserved: 0 };
    const remaining = Math.max(0, budget.amountUsd - standing.spent - standing.reserved);
    return new BudgetExceeded({ id: budget.id, name: budget.name, remaining_usd: remaining }, amount);
  }
}

/** A call's reservations, one step per budget, and what it holds once they are taken. */
export interface BudgetPlan {
  steps: BudgetStep[];
  held: Held[];
}

interface Held {
  id: string;
  budgetId: string;
  periodStart: number;
  budget: Budget;
}

/** What a call holds of its budgets until it ends. */
export class BudgetLease {
  private settled = false;

  constructor(
    private readonly keeper: BudgetKeeper,
    private readonly held: readonly Held[],
  ) {}

  /** Replaces the reservations by the call's cost (0 for a call that failed, or whose cost is unknown). */
  settle(cost: number | null | undefined): void {
    if (this.settled) return;
    this.settled = true;
    this.keeper.settleLater(this.held, cost ?? 0);
  }
}
