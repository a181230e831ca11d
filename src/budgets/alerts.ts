/**
 * Budget alerts (docs/api.md "Budgets", Alerts): when a period's spend first crosses one of its budget's
 * thresholds, one signed POST to the budget's webhook — once per threshold, period and budget across
 * every node, retried with backoff for a day, kept across restarts.
 *
 * Once: the alert is a row whose key is (budget, period, threshold), inserted by whichever settlement
 * crossed it; a second insert finds it there. Delivered once: a node attempts an alert only after moving
 * its next attempt on by a conditional update that holds for one node alone.
 */
import crypto from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { BudgetAlertsTable, Database } from '../db/schema.js';
import type { Crossing } from './budget-keeper.js';
import type { BudgetStore } from './budget-store.js';
import { periodAt } from './period.js';

/** How long alerts are retried after the crossing. */
const GIVE_UP_AFTER_MS = 24 * 3_600_000;
/** The longest wait between two attempts. */
const MAX_BACKOFF_MS = 3_600_000;
/** How long one attempt may take; also how long a node's claim on an attempt lasts. */
const ATTEMPT_TIMEOUT_MS = 10_000;
const BATCH = 20;

export interface AlertOptions {
  /** The wait before the first retry, doubled after each (GATELOG_ALERT_RETRY_MS). */
  firstRetryMs: number;
  /** How often due alerts are looked for (GATELOG_ALERT_POLL_MS). */
  pollMs: number;
}

export class BudgetAlerts {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly store: BudgetStore,
    private readonly options: AlertOptions,
  ) {}

  /** Records each threshold a settlement crossed (a budget with a webhook), and sends what is due. */
  async crossed({ budget, periodStart, spentBefore, spentAfter }: Crossing): Promise<void> {
    if (budget.webhookUrl === null) return;
    const crossed = budget.alertThresholds.filter(
      (t) => spentBefore < t * budget.amountUsd && spentAfter >= t * budget.amountUsd,
    );
    if (crossed.length === 0) return;
    const now = Date.now();
    const { end } = periodAt(budget.period, budget.tz, now);
    for (const threshold of crossed) {
      const body = JSON.stringify({
        type: 'budget.threshold',
        budget: { id: budget.id, name: budget.name, applies_to: budget.appliesTo },
        threshold,
        spent_usd: spentAfter,
        amount_usd: budget.amountUsd,
        period_start: end === null ? null : new Date(periodStart).toISOString(),
        period_end: end === null ? null : new Date(end).toISOString(),
      });
      await this.db
        .insertInto('budget_alerts')
        .values({
          budget_id: budget.id,
          period_start: periodStart,
          threshold,
          body,
          created_at: now,
          attempts: 0,
          next_attempt_at: now,
          delivered_at: null,
          given_up_at: null,
        })
        .onConflict((oc) => oc.columns(['budget_id', 'period_start', 'threshold']).doNothing())
        .execute();
    }
    this.deliverSoon();
  }

  start(): void {
    this.timer ??= setInterval(() => this.deliverSoon(), this.options.pollMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Delivers what is due, unless a round is already running here. */
  deliverSoon(): void {
    this.running ??= this.deliverDue()
      .catch(() => undefined)
      .finally(() => {
        this.running = null;
      });
  }

  /** One round: every due alert this node wins the claim of is attempted. */
  async deliverDue(now = Date.now()): Promise<void> {
    const due = await this.db
      .selectFrom('budget_alerts')
      .selectAll()
      .where('delivered_at', 'is', null)
      .where('given_up_at', 'is', null)
      .where('next_attempt_at', '<=', now)
      .orderBy('next_attempt_at')
      .limit(BATCH)
      .execute();
    await Promise.all(due.map((alert) => this.attempt(alert, now)));
  }

  private async attempt(alert: BudgetAlertsTable, now: number): Promise<void> {
    // The claim: moves the next attempt past this one's timeout, only if no other node has.
    const claimed = await this.db
      .updateTable('budget_alerts')
      .set({ next_attempt_at: now + ATTEMPT_TIMEOUT_MS, attempts: sql<number>`attempts + 1` })
      .where('budget_id', '=', alert.budget_id)
      .where('period_start', '=', alert.period_start)
      .where('threshold', '=', alert.threshold)
      .where('next_attempt_at', '=', alert.next_attempt_at)
      .where('delivered_at', 'is', null)
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) !== 1) return;
    const delivered = await this.post(alert);
    const attempts = alert.attempts + 1;
    const at = Date.now();
    const backoff = Math.min(this.options.firstRetryMs * 2 ** (attempts - 1), MAX_BACKOFF_MS);
    const done = delivered
      ? { delivered_at: at }
      : at + backoff > Number(alert.created_at) + GIVE_UP_AFTER_MS
        ? { given_up_at: at }
        : { next_attempt_at: at + backoff };
    await this.db
      .updateTable('budget_alerts')
      .set(done)
      .where('budget_id', '=', alert.budget_id)
      .where('period_start', '=', alert.period_start)
      .where('threshold', '=', alert.threshold)
      .execute();
  }

  /** One POST of the alert, signed; whether the webhook took it (2xx). Its answer is never kept. */
  private async post(alert: BudgetAlertsTable): Promise<boolean> {
    try {
      const budget = await this.db
        .selectFrom('budgets')
        .select('webhook_url')
        .where('id', '=', alert.budget_id)
        .executeTakeFirst();
      const secret = await this.store.webhookSecret(alert.budget_id);
      if (!budget?.webhook_url || secret === null) return false;
      const signature = crypto.createHmac('sha256', secret).update(alert.body).digest('hex');
      const res = await fetch(budget.webhook_url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gatelog-signature': `sha256=${signature}` },
        body: alert.body,
        redirect: 'manual',
        signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
      });
      await res.body?.cancel();
      return res.status >= 200 && res.status < 300;
    } catch {
      return false;
    }
  }
}
