/**
 * The response cache's part in a call (docs/api.md "Response cache"): whether it is cached, its key,
 * the answer already kept (a hit answers without any try), and keeping a complete answer.
 */
import { cacheKey, credentialDigest } from '../../cache/response-cache.js';
import { DEFAULT_SETTINGS } from '../../org-settings/settings.js';
import type { ProxiedRoute } from './contract.js';
import type { CallCache, ProxiedCall, ProxyResponse } from './call.js';
import { finish, seconds } from './record.js';
import { type Target, useTarget } from './targets.js';

/** The call answered from the cache, with no try at all; null: it goes upstream. */
export async function answerFromCache<Prepared>(
  call: ProxiedCall,
  route: ProxiedRoute<Prepared>,
  prepared: Prepared,
  target: Target,
): Promise<ProxyResponse | null> {
  call.cache = await callCache(call, route, prepared, target);
  if (call.cache === null || !route.cache) return null;
  const { deps, auth, log } = call;
  const started = performance.now();
  useTarget(call, target, target.credential, false);
  let res: ProxyResponse | null = null;
  if (route.cache.parts) {
    res = await route.cache.parts(prepared, call, call.cache.base);
  } else {
    const stored = await deps.cache.get(auth.organizationId, call.cache.key);
    if (stored !== null) {
      call.cache.status = 'HIT';
      res = await route.cache.replay(prepared, stored, call);
    }
  }
  if (res === null) return null;
  // The log is the stored answer's, at no cost (usage.ts).
  call.cache.status = 'HIT';
  log.cache_hit = true;
  log.routing_time = seconds(call.receivedAt, started);
  log.latency = seconds(started, performance.now());
  if (call.cache.omitLog) call.recorded = true;
  finish(call);
  res.headers = { ...res.headers, ...cacheHeader(call) };
  return res;
}

/** The cache's part in a call, from its parameters over its organization's settings; null: not cached. */
async function callCache<Prepared>(
  call: ProxiedCall,
  route: ProxiedRoute<Prepared>,
  prepared: Prepared,
  target: Target,
): Promise<CallCache | null> {
  if (!route.cache) return null;
  const { deps, params } = call;
  let settings;
  try {
    settings = await deps.settings.get(call.auth.organizationId);
  } catch {
    // A cache that cannot be read never fails a call: the call goes upstream.
    deps.cache.stats.errors++;
    if (params.cache.enabled !== true) return null;
    settings = DEFAULT_SETTINGS;
  }
  if (!(params.cache.enabled ?? settings.cache_enabled)) return null;
  const byCustomer = params.cache.byCustomer ?? settings.cache_options.cache_by_customer;
  const { provider, usedCustomCredential, apiKey } = target.credential;
  const base = {
    kind: route.logType,
    provider: provider.name,
    model: provider.model,
    customer: byCustomer ? (params.customerIdentifier ?? '') : null,
    // Only a call with its own key gains the field: the organization's keys keep the keys they had.
    ...(usedCustomCredential ? { credential: credentialDigest(apiKey) } : {}),
  };
  const request = route.cache.parts ? null : route.cache.request(prepared);
  if (!route.cache.parts && request === null) return null;
  return {
    key: route.cache.parts ? '' : cacheKey({ ...base, request }),
    base,
    ttl: params.cache.ttl ?? settings.cache_ttl,
    omitLog: params.cache.omitLog ?? settings.cache_options.omit_log,
    status: 'MISS',
  };
}

export function cacheHeader(call: ProxiedCall): Record<string, string> {
  return call.cache === null ? {} : { 'x-gatelog-cache': call.cache.status };
}

/**
 * Keeps a call's complete, successful answer in the cache (a route calls it once its answer is whole).
 * Not an answer a fallback model gave: the key is the first model's.
 */
export function storeInCache(call: ProxiedCall, body: () => string): void {
  const { cache, log } = call;
  // The body is made only when it is kept: a call without the cache pays nothing for it.
  if (cache === null || cache.key === '' || cache.status === 'HIT' || log.fallback_used === true) return;
  call.deps.cache.put(call.auth.organizationId, log.log_type ?? 'chat', cache.key, body(), cache.ttl);
}
