/**
 * The lifecycle every proxied call shares (docs/api.md "Chat completions", "Embeddings proxy",
 * "Speech-to-text proxy", "Retries and fallbacks"), as one short sequence:
 *
 *   prepare → plan → admit → cache → tries → answer → record
 *
 * prepare: the route reads and checks its call; plan: the provider, key and fallbacks (targets.ts);
 * admit: whether the call may go upstream at all (admit.ts); cache: an answer already kept
 * (call-cache.ts); tries: retries, fallbacks and the circuit breaker (tries.ts); answer: the provider's
 * answer given to the client, whole or streamed (answers.ts); record: exactly one log per authenticated
 * call — success, upstream error, or refused at any step (record.ts). A route supplies only how to read
 * its call, what to send upstream and how to read the answer (contract.ts).
 */
import type { AuthContext } from '../../auth/authenticator.js';
import { RejectedBody } from '../../errors.js';
import { admit } from './admit.js';
import { answerFromCache } from './call-cache.js';
import type { ProxiedRoute } from './contract.js';
import type { Arrival, ProxiedCall, ProxyResponse } from './call.js';
import type { ProxyDeps } from './deps.js';
import { abandonEarly } from './early-upload.js';
import { emptyPlatformParams } from './platform-params.js';
import { endCall } from './outcome.js';
import { finish, newLogFields } from './record.js';
import { planTargets } from './targets.js';
import { tryTargets } from './tries.js';

/**
 * Runs one proxied call from arrival to its log. Tracked by the log writer: on shutdown it stays open
 * until this call's log is queued.
 */
export function runProxiedCall<Prepared>(
  deps: ProxyDeps,
  auth: AuthContext,
  route: ProxiedRoute<Prepared>,
  arrival: Arrival,
): Promise<ProxyResponse> {
  const answer = deps.writer.track(lifecycle(deps, auth, route, arrival));
  // A streamed answer's log is recorded when its stream ends, after the answer began: tracked until then.
  // Tracked from the start (a shutdown that began waiting on the answer alone would miss the stream).
  void deps.writer.track(
    answer.then(
      (res) => res.ended,
      () => undefined,
    ),
  );
  return answer;
}

async function lifecycle<Prepared>(
  deps: ProxyDeps,
  auth: AuthContext,
  route: ProxiedRoute<Prepared>,
  { input, receivedAt, logId, via, session }: Arrival,
): Promise<ProxyResponse> {
  const kinds = deps.providerKinds.serving(route.providerRoute);
  const call: ProxiedCall = {
    deps,
    auth,
    params: emptyPlatformParams(),
    log: newLogFields(logId, route as ProxiedRoute<unknown>, kinds),
    early: null,
    prepared: false,
    provider: null,
    cache: null,
    via,
    session,
    receivedAt,
    recorded: false,
    refused: false,
    used: null,
    rateLease: null,
    budgetLease: null,
  };
  let prepared: Prepared | null = null;
  try {
    if (input instanceof RejectedBody) throw input.error;
    try {
      prepared = await route.prepare(call, input);
    } finally {
      call.prepared = true;
    }
    const model = route.model(prepared);
    const targets = await planTargets(deps, auth, call.params, kinds, model, call.provider, call.early?.apiKey);
    await admit(call, route, prepared, targets);
    const cached = await answerFromCache(call, route, prepared, targets[0]);
    return withLimitHeaders(call, cached ?? (await tryTargets(call, route, prepared, targets, model)));
  } catch (err) {
    endCall(call, { kind: 'error', error: err });
    if (prepared !== null) await route.settle?.(prepared, call);
    finish(call);
    throw err;
  } finally {
    if (call.early !== null && !call.early.sent) abandonEarly(call.early);
    if (prepared !== null) route.release?.(prepared);
  }
}

/** A call under rate limits answers with the tightest one's x-ratelimit-* headers. */
function withLimitHeaders(call: ProxiedCall, res: ProxyResponse): ProxyResponse {
  if (call.rateLease === null) return res;
  res.headers = { ...call.rateLease.headers, ...res.headers };
  return res;
}
