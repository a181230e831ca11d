/**
 * Admission: whether a prepared and planned call may go upstream, decided once, before the cache and
 * the tries (its key's models were checked while planning: allowed-models.ts): room for its log, its
 * budgets (each must hold its highest possible cost) and its rate limits. A refused call sends nothing
 * upstream, holds nothing, and is logged as failed.
 */
import { AppError } from '../../errors.js';
import { countsTokens } from '../../limits/rate-limiter.js';
import type { ProxiedCall, ProxiedRoute } from './contract.js';
import { highestCost, type MeasuredDemand, measureDemand } from './demand.js';
import type { ProxyDeps } from './deps.js';
import type { Target } from './targets.js';

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
  if (budgeted.length > 0) {
    const cost = highestCost(prices, targets, demand);
    call.budgetLease = await budgets.reserve(budgeted, call.log.unique_id ?? '', cost, route.model(prepared));
  }
  if (applied.length === 0) return;
  try {
    call.rateLease = await limits.take(applied, demand.promptTokens + demand.outputTokens);
  } catch (err) {
    // Refused by a limit: the call holds nothing of its budgets either.
    call.budgetLease?.settle(0);
    throw err;
  }
}

/** Refuses a call before it goes upstream when its log could not be kept. */
export function assertLogRoom(deps: ProxyDeps): void {
  if (!deps.writer.hasRoom(1)) {
    throw new AppError(503, 'log_buffer_full', 'The log store is unavailable and the log buffer is full; retry later.');
  }
}
