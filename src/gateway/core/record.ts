/**
 * The call's one log: its fields as the call begins (newLogFields), and its queueing once the call is
 * over (finish) with the platform parameters the route read, counted in the metrics.
 */
import type { LogFields } from '../../logs/write/new-log.js';
import { buildNewLog } from '../../logs/write/new-log.js';
import type { ProxiedRoute } from './contract.js';
import type { ProxiedCall } from './call.js';
import { costOf } from './usage.js';

/** Seconds between two performance.now() readings. */
export const seconds = (from: number, to: number) => Math.max(0, (to - from) / 1000);

export function newLogFields(logId: string, route: ProxiedRoute<unknown>, kinds: readonly string[]): LogFields {
  return {
    unique_id: logId,
    log_type: route.logType,
    log_method: 'inference',
    provider_id: kinds[0],
    timestamp: Date.now(),
    model: '',
    input: undefined,
    output: undefined,
    embedding_count: null,
    embedding_dimensions: null,
    audio_duration: null,
    transcript: null,
    prompt_messages: undefined,
    completion_message: undefined,
    tools: undefined,
    tool_choice: undefined,
    tool_calls: undefined,
    temperature: null,
    max_tokens: null,
    stream: false,
    time_to_first_token: null,
    tokens_per_second: undefined,
    prompt_tokens: undefined,
    completion_tokens: undefined,
    cost: undefined,
    status_code: 200,
    error_message: null,
    error_code: null,
    routing_time: 0,
    latency: 0,
    used_custom_credential: false,
    metadata: undefined,
    customer_identifier: undefined,
    customer_email: undefined,
    thread_identifier: undefined,
    attempts: undefined,
    fallback_used: false,
    cache_hit: false,
    omitContent: false,
  };
}

/** Queues the call's one log, once: a later call (after a failure in recording itself) does nothing. */
export function finish(call: ProxiedCall): void {
  if (call.recorded) return;
  call.recorded = true;
  record(call);
}

/** Queues the call's one log with its platform parameters, and counts it. */
function record(call: ProxiedCall): void {
  const { receivedAt } = call;
  const { deps, params, log } = call;
  log.metadata = params.metadata;
  log.customer_identifier = params.customerIdentifier;
  log.customer_email = params.customerEmail;
  // The caller's own thread_identifier wins over its agent's session header; an empty one names none.
  log.thread_identifier = params.threadIdentifier || call.session || undefined;
  log.omitContent = params.disableLog;
  // A failed call (cut off, the client gone) costs 0 in its log, as every failed call does (new-log.ts);
  // its budgets are charged what it used all the same (a stream cut midway was billed for what it sent).
  const cost = costOf(call);
  log.cost = (log.status_code ?? 200) < 400 ? cost : undefined;
  deps.writer.enqueue([buildNewLog(log, call.auth, deps.prices, deps.config.logMaxBytes)]);
  // Tokens are counted against rate limits as reserved until now: what reached a provider replaces them.
  call.rateLease?.settle(call.cache?.status === 'HIT' ? 0 : (log.prompt_tokens ?? 0) + (log.completion_tokens ?? 0));
  call.budgetLease?.settle(cost);
  const upstream = log.latency ?? 0;
  deps.metrics.proxiedCall(
    log.provider_id ?? '',
    log.model ?? '',
    log.status_code ?? 200,
    upstream,
    seconds(receivedAt, performance.now()) - upstream,
  );
  // Refused by gatelog (outcome.ts): counted by why, the code its log keeps.
  if (call.refused) deps.metrics.refusedCall(log.error_code ?? 'unknown');
}

/**
 * The request_breakdown of a successful call (docs/api.md "Platform parameters"): the call as its log has
 * it. `fullRequest` is the request as sent upstream.
 */
export function requestBreakdown(call: ProxiedCall, fullRequest: unknown): Record<string, unknown> {
  const { log, params } = call;
  return {
    prompt_tokens: log.prompt_tokens ?? 0,
    completion_tokens: log.completion_tokens ?? 0,
    // A hit from the cache costs nothing; else unknown (null) for a model without a price.
    cost: costOf(call) ?? null,
    prompt_messages: null,
    completion_message: null,
    model: log.model,
    cached: call.cache?.status === 'HIT',
    timestamp: new Date(log.timestamp ?? Date.now()).toISOString(),
    status_code: 200,
    stream: false,
    latency: log.latency,
    scores: {},
    category: log.log_type,
    metadata: params.metadata,
    routing_time: log.routing_time,
    full_request: fullRequest,
    sentiment_score: null,
  };
}
