/**
 * Who gives up bytes when the response cache is full (docs/decisions.md "The response cache's bound"):
 * the organizations holding the most, down to a common level, so that one organization's burst evicts its
 * own entries first and reaches another's only once both hold as much. An organization at or under the
 * level loses nothing.
 */

/** An organization's bytes in the cache as a write would leave them: stored ones and the write's own. */
export interface OrganizationBytes {
  organizationId: string;
  stored: number;
  incoming: number;
}

/**
 * Bytes each organization must free so that `excess` bytes go: the highest level L such that cutting every
 * organization down to L frees at least `excess`, each organization's cut being what it holds above L. All
 * bytes count (the write's too: an organization writing more than its share drops its own oldest new
 * entries, not another's). Organizations not in the answer keep everything.
 */
export function evictionQuotas(usage: readonly OrganizationBytes[], excess: number): Map<string, number> {
  const quotas = new Map<string, number>();
  if (excess <= 0) return quotas;
  const totals = usage.map((u) => ({ id: u.organizationId, bytes: u.stored + u.incoming }));
  const freedAt = (level: number) => totals.reduce((sum, t) => sum + Math.max(0, t.bytes - level), 0);
  // freedAt falls as the level rises: the highest level that still frees enough, by bisection.
  let low = 0;
  let high = Math.max(0, ...totals.map((t) => t.bytes));
  if (freedAt(low) < excess) {
    for (const t of totals) if (t.bytes > 0) quotas.set(t.id, t.bytes);
    return quotas;
  }
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (freedAt(mid) >= excess) low = mid;
    else high = mid - 1;
  }
  for (const t of totals) if (t.bytes > low) quotas.set(t.id, t.bytes - low);
  return quotas;
}
