/**
 * Admission: whether a prepared and planned call may go upstream, decided once, before the cache and
 * the tries (its key's models were checked while planning: allowed-models.ts). A refused call sends
 * nothing upstream and is logged as failed.
 */
import { AppError } from '../../errors.js';
import { countsTokens } from '../../limits/rate-limiter.js';
import type { ProxiedCall, ProxiedRoute } from './contract.js';
import { reservedTokens } from './demand.js';
import type { ProxyDeps } from './deps.js';
import type { Target } from './targets.js';

export async function admit<Prepared>(
  call: ProxiedCall,
  route: ProxiedRoute<Prepared>,
  prepared: Prepared,
  _targets: readonly Target[],
): Promise<void> {
  assertLogRoom(call.deps);
  const { limits } = call.deps;
  const applied = await limits.applying(call.auth, call.params.customerIdentifier ?? null);
  if (applied.length === 0) return;
  const tokens = countsTokens(applied) ? await reservedTokens(call, route, prepared) : 0;
  call.rateLease = await limits.take(applied, tokens);
}

/** Refuses a call before it goes upstream when its log could not be kept. */
export function assertLogRoom(deps: ProxyDeps): void {
  if (!deps.writer.hasRoom(1)) {
    throw new AppError(503, 'log_buffer_full', 'The log store is unavailable and the log buffer is full; retry later.');
  }
}
