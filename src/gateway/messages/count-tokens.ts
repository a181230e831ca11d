/**
 * POST /api/anthropic/v1/messages/count_tokens (docs/api.md "Anthropic Messages API"): Anthropic's count
 * of a request's input tokens, as Claude Code asks it. It goes to the provider the messages route would
 * call for the same body — chosen, keyed and held to the key's allowed models as that route's call is
 * (core/targets.ts) — and the provider's answer comes back as it came: status, content type and body.
 * It is not a model call: it costs nothing, so it makes no log and reserves no budget; the rate limits
 * that apply to the call count it as one request of no tokens (docs/decisions.md "Anthropic's Messages
 * API, natively"). /metrics counts it in gatelog_passthrough_calls_total.
 */
import type { AuthContext } from '../../auth/authenticator.js';
import { AppError, RejectedBody } from '../../errors.js';
import type { UpstreamRequest } from '../../providers/upstream-client.js';
import type { ProxyResponse } from '../core/call.js';
import type { ProxyDeps } from '../core/deps.js';
import { addressedWith } from '../core/credential.js';
import { jsonCall } from '../core/json-call.js';
import { type PlatformParams, takePlatformParams } from '../core/platform-params.js';
import { planTargets } from '../core/targets.js';
import type { BucketState } from '../../limits/draw.js';
import { type Forwarded, modelOf } from './request.js';

/** Anthropic's path for the count, under the provider's base URL. */
export const COUNT_TOKENS_PATH = '/v1/messages/count_tokens';
/** The route as /metrics names it (its documented path). */
export const COUNT_TOKENS_ROUTE = `/api/anthropic${COUNT_TOKENS_PATH}`;

type Json = Record<string, unknown>;

export interface CountTokensCall {
  /** The parsed body, or the parser's refusal. */
  body: unknown;
  forwarded: Forwarded;
  /** The gatelog installations the call came through (loop-guard.ts), passed on with it. */
  via: readonly string[];
}

/** The provider's answer to the count; counted in /metrics by the status the caller gets, whatever it is. */
export async function countTokens(deps: ProxyDeps, auth: AuthContext, call: CountTokensCall): Promise<ProxyResponse> {
  let provider = '';
  let status = 500;
  try {
    const fields = bodyOf(call.body);
    // Taken out as on the messages route: they are gatelog's (customer_credentials choose the key,
    // customer_identifier the customer's rate limit), and Anthropic refuses fields it does not know.
    const params = takePlatformParams(fields);
    const model = modelOf(fields);
    const upstream = await upstreamRequest(deps, auth, params, fields, model, call);
    provider = upstream.provider;
    const limitHeaders = await drawRequest(deps, auth, params);
    const answer = await deps.upstream.post({ ...upstream.request, via: call.via });
    status = answer.status;
    return {
      status: answer.status,
      contentType: answer.contentType,
      body: answer.body,
      upstreamRequestId: answer.requestId,
      // An error's body is the provider's, as it came: this says so (a 401 here is not gatelog refusing a key).
      headers: { ...limitHeaders, ...(answer.status >= 400 ? { 'x-gatelog-error-source': 'provider' } : {}) },
    };
  } catch (err) {
    if (err instanceof AppError) status = err.status;
    throw err;
  } finally {
    deps.metrics.passthroughCall(COUNT_TOKENS_ROUTE, provider, status);
  }
}

/** A JSON object (its copy, to take the platform parameters out of), or the 400 the messages route gives. */
function bodyOf(body: unknown): Json {
  if (body instanceof RejectedBody) throw body.error;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new AppError(400, 'invalid_value', 'The body must be a JSON object.', null);
  }
  return { ...(body as Json) };
}

/**
 * The count as the provider that serves `model` takes it: planned as the messages route plans its call
 * (the provider, its key, the key's allowed models), and sent to the first model planned, once — a count
 * is not worth retries or fallbacks, and Anthropic's client retries it itself.
 */
async function upstreamRequest(
  deps: ProxyDeps,
  auth: AuthContext,
  params: PlatformParams,
  fields: Json,
  model: string,
  call: CountTokensCall,
): Promise<{ provider: string; request: UpstreamRequest }> {
  const kinds = deps.providerKinds.serving('messages');
  const [target] = await planTargets(deps, auth, params, kinds, model, null, undefined);
  const { credential } = target;
  const { provider } = credential;
  const { forwarded } = call;
  const sent = jsonCall(
    `${COUNT_TOKENS_PATH}${forwarded.query}`,
    { upstreamBody: fields, model: target.model, stream: false },
    provider.model,
    forwarded.headers,
  );
  return { provider: provider.name, request: addressedWith(sent, credential) };
}

/**
 * One request drawn from every rate limit that applies (no tokens: a count uses none), or the 429 of
 * the one that has no room; the tightest limits' x-ratelimit-* headers for the answer.
 */
async function drawRequest(
  deps: ProxyDeps,
  auth: AuthContext,
  params: PlatformParams,
): Promise<Record<string, string>> {
  const { limits } = deps;
  const applied = await limits.applying(auth, params.customerIdentifier ?? null);
  if (applied.length === 0) return {};
  const draws = limits.plan(applied, 0);
  const admission = await deps.admission.take(draws);
  if (!admission.taken) throw await limits.refused(applied, draws, admission.refusedAt);
  return limits.lease(applied, 0, draws, admission.results as BucketState[]).headers;
}
