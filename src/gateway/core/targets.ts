/**
 * The tries of one proxied call (docs/api.md "Retries and fallbacks"): the models it may try, each with
 * its provider and key, which failures are worth another try, how long to wait, and the provider's next
 * key after a 429. core/tries.ts runs the tries.
 */
import type { AuthContext } from '../../auth/authenticator.js';
import { AppError } from '../../errors.js';
import { attemptedModel } from '../../logs/indexed-text.js';
import type { Attempt } from '../../logs/write/new-log.js';
import { pickKey, type ProviderChoice } from '../../providers/choose-provider.js';
import type { ProviderKind } from '../../providers/credentials.js';
import { authenticateWith } from '../../providers/kind.js';
import type { UpstreamResponse, UpstreamStream } from '../../providers/upstream-client.js';
import type { TryVerdict } from './circuit-breaker.js';
import { assertGroupAllowed, assertModelAllowed } from './allowed-models.js';
import { chooseFor, type ResolvedCredential, resolveCredential } from './credential.js';
import type { PlatformParams } from './platform-params.js';
import type { ProxiedCall } from './call.js';
import type { ProxyDeps } from './deps.js';
import { MAX_RETRY_WAIT_S, modelsToTry, type RoutingParams } from './routing-params.js';

/** What one upstream try came to. */
export type TryOutcome =
  | { kind: 'stream'; stream: UpstreamStream; dispatchedAt: number }
  | { kind: 'answer'; response: UpstreamResponse; dispatchedAt: number }
  /** No answer: unreachable, a timeout, the connection lost. */
  | { kind: 'error'; error: AppError; dispatchedAt: number };

/** gatelog's errors for a try the provider did not answer: another try may fare better. */
export const UPSTREAM_FAILURES = new Set([
  'upstream_unreachable',
  'upstream_timeout',
  'upstream_connection_lost',
  'upstream_invalid_content_type',
]);
/** Besides every 5xx, the statuses worth another try (docs/api.md "Retries and fallbacks"). */
export const RETRYABLE_STATUSES = new Set([408, 409, 429]);

/** One model a call may try, with the provider and key that serve it. */
export interface Target {
  /** The model as the call (or its fallback_models) named it. */
  model: string;
  credential: ResolvedCredential;
}

/**
 * The models a call tries, in order (its own or its load-balance group's pick, then its fallbacks), each
 * with its provider and key — all checked before anything goes upstream, so that a fallback no
 * provider serves is a 400 naming it rather than a failure found mid-call.
 */
export async function planTargets(
  deps: ProxyDeps,
  auth: AuthContext,
  params: PlatformParams,
  /** The provider kinds the route calls. */
  kinds: readonly ProviderKind[],
  model: string,
  /** The provider already chosen for `model` (a route that needed it to read its call), or null. */
  chosen: ProviderChoice | null,
  /** The key an upload sent early went with. */
  earlyKey: string | undefined,
): Promise<Target[]> {
  const { routing } = params;
  // Most keys allow every model and most calls name no group: no await on their path.
  if (auth.allowedModels.length > 0 && routing.loadBalance !== null) await assertGroupAllowed(deps, auth, routing);
  const targets: Target[] = [];
  for (const [index, name] of modelsToTry(model, routing).entries()) {
    try {
      // A route that needed the provider to read its call (embeddings) chose it already.
      const provider = index === 0 && name === model && chosen ? chosen : await chooseFor(deps, auth, name);
      assertModelAllowed(auth, name, provider.name, index === 0 ? 'model' : fallbackParam(routing, name));
      const preferKey = index === 0 ? earlyKey : undefined;
      targets.push({
        model: name,
        credential: resolveCredential(deps, provider, name, params, kinds, preferKey),
      });
    } catch (err) {
      if (!(err instanceof AppError) || (index === 0 && name === model)) throw err;
      const param = index === 0 ? 'load_balance_group.models' : fallbackParam(routing, name);
      throw new AppError(err.status, err.code, err.message, param);
    }
  }
  return targets;
}

function fallbackParam(routing: RoutingParams, name: string): string {
  return `fallback_models[${routing.fallbackModels.indexOf(name)}]`;
}

export function statusOf(outcome: TryOutcome): number {
  if (outcome.kind === 'stream') return outcome.stream.status;
  return outcome.kind === 'answer' ? outcome.response.status : outcome.error.status;
}

/** What a try came to for the circuit breaker: only a connection never made is the same for every caller. */
export function verdictOf(outcome: TryOutcome): TryVerdict {
  const status = statusOf(outcome);
  if (status < 500) return 'answered';
  return outcome.kind === 'error' && outcome.error.code === 'upstream_unreachable' ? 'unreachable' : 'failed';
}

export function attemptOf(target: Target, status: number, error: string, latency: number): Attempt {
  return { provider: target.credential.provider.name, model: target.model, status_code: status, error, latency };
}

/** The provider's next registered key not yet tried by this call, or null (a caller's own key has none). */
export function otherKey(credential: ResolvedCredential, tried: ReadonlySet<string>): ResolvedCredential | null {
  if (credential.usedCustomCredential) return null;
  const keys = (credential.provider.registered?.keys ?? []).filter((k) => !tried.has(k.apiKey));
  const key = pickKey(keys);
  if (key === null) return null;
  const { definition, registered } = credential.provider;
  return { ...credential, apiKey: key.apiKey, auth: authenticateWith(definition, key.apiKey, registered?.options) };
}

/** Seconds before retry number `retry` + 1: retry_after doubled each time, or the provider's retry-after when longer. */
export function retryWait(routing: RoutingParams, retry: number, providerSays: number | undefined): number {
  return Math.min(MAX_RETRY_WAIT_S, Math.max(routing.retryAfter * 2 ** retry, providerSays ?? 0));
}

export const sleep = (s: number) => new Promise<void>((resolve) => setTimeout(resolve, s * 1000));

export function circuitOpen(provider: string): AppError {
  return new AppError(
    503,
    'provider_unavailable',
    `Provider '${provider}' failed on every recent call; gatelog skips it for a while (GATELOG_CIRCUIT_COOLDOWN_MS) ` +
      'and tries it again after.',
  );
}

/** The log and the call as of the try about to be made. */
export function useTarget(call: ProxiedCall, target: Target, credential: ResolvedCredential, fallback: boolean): void {
  const { log } = call;
  call.provider = credential.provider;
  log.provider_id = credential.provider.name;
  log.used_custom_credential = credential.usedCustomCredential;
  if (fallback || target.model !== log.model) log.model = attemptedModel(target.model) ?? log.model;
}
