/**
 * The tries of a call (docs/api.md "Retries and fallbacks"): each target in order — the model asked
 * for, then its fallbacks — with its retries, another key of the provider on a 429, and the circuit
 * breaker's verdict before each. The first answer that is not a failure worth another try is the
 * call's; when none is, the last try's failure is, and the tries before it are the log's attempts.
 */
import { AppError } from '../../errors.js';
import type { Attempt } from '../../logs/write/new-log.js';
import type { UpstreamRequest } from '../../providers/upstream-client.js';
import { streamAnswer, upstreamError, wholeAnswer } from './answers.js';
import type { ProxiedRoute } from './contract.js';
import type { ProxiedCall, ProxyResponse } from './call.js';
import { addressedWith, type ResolvedCredential } from './credential.js';
import { abandonEarly } from './early-upload.js';
import { seconds } from './record.js';
import {
  attemptOf,
  circuitOpen,
  otherKey,
  RETRYABLE_STATUSES,
  retryWait,
  sleep,
  statusOf,
  type Target,
  type TryOutcome,
  UPSTREAM_FAILURES,
  useTarget,
  verdictOf,
} from './targets.js';

export async function tryTargets<Prepared>(
  call: ProxiedCall,
  route: ProxiedRoute<Prepared>,
  prepared: Prepared,
  targets: readonly Target[],
  model: string,
): Promise<ProxyResponse> {
  const { deps, auth, log } = call;
  const streams = route.streams?.(prepared) === true && route.streamReader !== undefined;
  const { routing } = call.params;
  // The tries that did not answer, in order; the last one is the log's own outcome when none answers.
  const attempts: Attempt[] = [];
  let last: TryOutcome | null = null;

  /** One try: sent, and its answer's headers read (a stream is not read further here). */
  const tryOnce = async (credential: ResolvedCredential, first: boolean): Promise<TryOutcome> => {
    const { early } = call;
    const useEarly =
      first &&
      !streams &&
      early !== null &&
      !early.failed &&
      early.apiKey === credential.apiKey &&
      early.baseUrl === credential.baseUrl &&
      early.provider === credential.provider.name &&
      credential.provider.model === model &&
      route.completeEarly?.(prepared) === true;
    if (useEarly) early.sent = true;
    // Timed from here either way: the upload's own time is the caller's, not the provider's.
    const dispatchedAt = performance.now();
    try {
      if (useEarly) return { kind: 'answer', response: await early.response, dispatchedAt };
      if (early !== null && !early.sent) abandonEarly(early);
      const request = upstreamRequest(route, prepared, credential);
      request.via = call.via;
      if (!streams) return { kind: 'answer', response: await deps.upstream.post(request), dispatchedAt };
      const opened = await deps.upstream.open(request);
      // An answer that is not a stream: an error before it began, or a provider that answered whole.
      if (opened.kind === 'whole') return { kind: 'answer', response: opened.response, dispatchedAt };
      return { kind: 'stream', stream: opened, dispatchedAt };
    } catch (err) {
      if (err instanceof AppError && UPSTREAM_FAILURES.has(err.code))
        return { kind: 'error', error: err, dispatchedAt };
      throw err;
    } finally {
      // Timed whether the upstream answered or failed: the log of a 502/504 carries them too.
      log.routing_time = seconds(call.receivedAt, dispatchedAt);
      log.latency = seconds(dispatchedAt, performance.now());
    }
  };

  for (const [index, target] of targets.entries()) {
    let credential = target.credential;
    if (!deps.breaker.allow(auth.organizationId, credential.baseUrl)) {
      useTarget(call, target, credential, index > 0);
      const error = circuitOpen(credential.provider.name);
      attempts.push(attemptOf(target, error.status, error.message, 0));
      last = { kind: 'error', error, dispatchedAt: performance.now() };
      continue;
    }
    const keysTried = new Set([credential.apiKey]);
    for (let retry = 0; ;) {
      useTarget(call, target, credential, index > 0);
      const outcome = await tryOnce(credential, index === 0 && retry === 0 && keysTried.size === 1);
      last = outcome;
      const status = statusOf(outcome);
      deps.breaker.record(auth.organizationId, credential.baseUrl, verdictOf(outcome));
      if (!RETRYABLE_STATUSES.has(status) && status < 500) {
        log.attempts = attempts;
        log.fallback_used = index > 0;
        if (outcome.kind === 'stream') {
          return streamAnswer(
            call,
            outcome.stream,
            route.streamReader!(prepared, call, outcome.dispatchedAt),
            outcome.dispatchedAt,
          );
        }
        if (outcome.kind === 'answer') return await wholeAnswer(route, prepared, call, outcome.response);
      }
      attempts.push(attemptOf(target, status, failureMessage(call, outcome), log.latency ?? 0));
      // A key's rate limit is not its provider's: the provider's next key first, without a wait.
      const nextKey = status === 429 ? otherKey(credential, keysTried) : null;
      if (nextKey !== null) {
        keysTried.add(nextKey.apiKey);
        credential = nextKey;
        continue;
      }
      if (retry >= routing.retries) break;
      await sleep(retryWait(routing, retry, outcome.kind === 'answer' ? outcome.response.retryAfter : undefined));
      retry++;
    }
  }
  // No try answered: the last one's failure is the call's, and the tries before it are its attempts.
  attempts.pop();
  log.attempts = attempts;
  log.fallback_used = false;
  if (last === null || last.kind === 'stream') throw new Error('no upstream try was made');
  if (last.kind === 'error') throw last.error;
  return await wholeAnswer(route, prepared, call, last.response);
}

function failureMessage(call: ProxiedCall, outcome: TryOutcome): string {
  if (outcome.kind === 'error') return outcome.error.message;
  if (outcome.kind === 'answer') return upstreamError(call, outcome.response).message;
  return '';
}

/** The route's upstream call with the credential's server and key (set on it: no copy per call). */
function upstreamRequest<Prepared>(
  route: ProxiedRoute<Prepared>,
  prepared: Prepared,
  credential: ResolvedCredential,
): UpstreamRequest {
  return addressedWith(route.upstreamCall(prepared, credential.provider.model, credential.provider), credential);
}
