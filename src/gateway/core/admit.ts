/**
 * Admission: whether a prepared and planned call may go upstream, decided once, before the cache and
 * the tries (its key's models were checked while planning: allowed-models.ts): room for its log, its
 * budgets (each must hold its highest possible cost) and its rate limits, all taken in one statement
 * (admission/admission-ledger.ts). A refused call sends nothing upstream, holds nothing, and is logged
 * as failed.
 */
import { AppError } from '../../errors.js';
import { countsTokens } from '../../limits/rate-limiter.js';
import type { ProxiedRoute } from './contract.js';
import type { ProxiedCall } from './call.js';
import { highestCost, type MeasuredDemand, measureDemand } from './demand.js';
import type { ProxyDeps } from './deps.js';
import type { Target } from './targets.js';
import type { BucketState } from '../../limits/draw.js';

const NOTHING: MeasuredDemand = { promptTokens: 0, outputTokens: 0 };

export async function admit<Prepared>(
  call: ProxiedCall,
  route: ProxiedRoute<Prepared>,
  prepared: Prepared,
  targets: readonly Target[],
): Promise<void> {
  assertLogRoom(call.deps);
  const { limits, budgets, prices } = call.deps;
  const customer = call.params.customerIdentifier ?? null;
  const [applied, budgeted] = await Promise.all([
    limits.applying(call.auth, customer),
    budgets.applying(call.auth, customer),
  ]);
  if (applied.length === 0 && budgeted.length === 0) return;
  const demand = budgeted.length > 0 || countsTokens(applied) ? await measureDemand(call, route, prepared) : NOTHING;
  const budgetPlan =
    budgeted.length > 0
      ? budgets.plan(
          budgeted,
          call.log.unique_id ?? '',
          highestCost(prices, targets, demand),
          route.model(prepared),
          demand.audioSeconds === null ? 'audio' : 'price',
        )
      : null;
  const tokens = demand.promptTokens + demand.outputTokens;
  const draws = applied.length > 0 ? limits.plan(applied, tokens) : [];
  const reservations = budgetPlan?.steps ?? [];
  // Budgets first, then limits: one statement (or transaction) takes them all, or none.
  const admission = await call.deps.admission.take([...reservations, ...draws]);
  if (!admission.taken) {
    const at = admission.refusedAt;
    throw at < reservations.length
      ? await budgets.refusal(budgetPlan!, at)
      : await limits.refused(applied, draws, at - reservations.length);
  }
  if (budgetPlan !== null) call.budgetLease = budgets.lease(budgetPlan);
  if (applied.length > 0) {
    const states = admission.results.slice(reservations.length) as BucketState[];
    call.rateLease = limits.lease(applied, tokens, draws, states);
  }
}

/** Refuses a call before it goes upstream when its log could not be kept. */
export function assertLogRoom(deps: ProxyDeps): void {
  if (!deps.writer.hasRoom(1)) {
    throw new AppError(503, 'log_buffer_full', 'The log store is unavailable and the log buffer is full; retry later.');
  }
}
