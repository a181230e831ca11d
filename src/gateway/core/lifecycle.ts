/**
 * The lifecycle every proxied call shares (docs/api.md "Chat completions", "Embeddings proxy",
 * "Speech-to-text proxy", "Retries and fallbacks"): validation by its route, the provider and key
 * (credential.ts), the tries — retries, fallbacks, the circuit breaker (call-targets.ts) — timing,
 * errors passed through, and exactly one log per authenticated call: success, upstream error, or
 * rejected by our validation. A route supplies only how to read its call, what to send upstream and how
 * to read the answer.
 */
import type { AuthContext } from '../../auth/authenticator.js';
import { AppError, RejectedBody } from '../../errors.js';
import { attemptedModel } from '../../logs/indexed-text.js';
import { type Attempt, buildNewLog, type LogFields } from '../../logs/write/new-log.js';
import { pickKey, type ProviderChoice } from '../../providers/choose-provider.js';
import type { ProviderKind } from '../../providers/credentials.js';
import type { UpstreamError } from '../../providers/protocol.js';
import { protocolOf } from '../../providers/protocols.js';
import type { UpstreamRequest, UpstreamResponse, UpstreamStream } from '../../providers/upstream-client.js';
import { StreamPipeline, type StreamReader } from './stream-pipeline.js';
import { emptyPlatformParams, type PlatformParams } from './platform-params.js';
import type { Readable } from 'node:stream';
import {
  attemptOf,
  circuitOpen,
  otherKey,
  planTargets,
  RETRYABLE_STATUSES,
  retryWait,
  sleep,
  statusOf,
  type Target,
  type TryOutcome,
  UPSTREAM_FAILURES,
  verdictOf,
} from './targets.js';
import { assertUpstreamAllowed, type ResolvedCredential } from './credential.js';
import type { ProxyDeps } from './deps.js';
import { cacheKey, credentialDigest } from '../../cache/response-cache.js';
import { DEFAULT_SETTINGS } from '../../org-settings/settings.js';

export type { ProxyDeps } from './deps.js';

/** Seconds between two performance.now() readings. */
export const seconds = (from: number, to: number) => Math.max(0, (to - from) / 1000);

/** Refuses a call before it goes upstream when its log could not be kept. */
export function assertLogRoom(deps: ProxyDeps): void {
  if (!deps.writer.hasRoom(1)) {
    throw new AppError(503, 'log_buffer_full', 'The log store is unavailable and the log buffer is full; retry later.');
  }
}

/**
 * A provider's error answer as its protocol reads it: the status and message the log keeps. A refused
 * key (401, 403) says whose key it was: the client sees the provider's answer as it came, which reads
 * like a refused gatelog key.
 */
function upstreamError(call: ProxiedCall, upstream: UpstreamResponse): UpstreamError {
  // The provider is chosen before every try (useTarget).
  const provider = call.provider!;
  const error = protocolOf(provider.kind).error(upstream.status, upstream.body);
  if (error.status !== 401 && error.status !== 403) return error;
  const whose = call.log.used_custom_credential
    ? "the key in the call's customer_credentials"
    : `the key registered for it in gatelog (replace it with POST /api/provider-keys/)`;
  return { ...error, message: `Provider '${provider.name}' refused ${whose}: ${error.message}` };
}

/** The answer a proxied call gives its client. */
export interface ProxyResponse {
  status: number;
  contentType: string;
  /** A stream (an event stream passed on as it arrives) ends when the call does. */
  body: Buffer | string | Readable;
  /** A streamed answer: settles once its log is recorded. */
  ended?: Promise<void>;
  /** The provider's x-request-id, passed through. */
  upstreamRequestId?: string;
  /** Extra answer headers (a text transcription's X-Request-Breakdown). */
  headers?: Record<string, string>;
}

/** One call in progress: what its route has learned so far, and the log being built from it. */
export interface ProxiedCall {
  readonly deps: ProxyDeps;
  readonly auth: AuthContext;
  params: PlatformParams;
  /**
   * The call's log, filled in as the call goes: a refusal at any step is logged with what was known.
   * One object literal of one shape for every call (see newLogFields): the log is built on every call,
   * and building it from spread objects of varying shapes took a seventh of the event loop at full load.
   */
  readonly log: LogFields;
  /** The upstream call started before the call was read whole (see dispatchEarly), if any. */
  early: EarlyUpstream | null;
  /** The route has read and checked the whole call: too late for an upstream call to start early. */
  prepared: boolean;
  /** The provider serving the call, once chosen (after prepare, or by a route's prepare that needs it). */
  provider: ProviderChoice | null;
  /** The response cache's part in this call, when it is cached (docs/api.md "Response cache"). */
  cache: CallCache | null;
  /** The gatelog installations the call came through (loop-guard.ts), passed on with it. */
  readonly via: readonly string[];
}

/** A cached call: its key, how long its answer is kept, and what the cache did ("X-Gatelog-Cache"). */
export interface CallCache {
  /** The whole call's key ('' for a route that caches parts of calls). */
  key: string;
  /** What every key of the call holds besides its request: route, provider, model, customer. */
  base: Record<string, unknown>;
  ttl: number;
  omitLog: boolean;
  status: 'HIT' | 'MISS' | 'PARTIAL';
}

/** An upstream call whose body is still arriving from the caller. */
interface EarlyUpstream {
  readonly body: Readable;
  /** The provider it went to; its body carries the model as the caller named it. */
  readonly provider: string;
  readonly apiKey: string;
  readonly baseUrl: string;
  readonly response: Promise<UpstreamResponse>;
  /** It failed before the call was complete (then the call is sent again, whole). */
  failed: boolean;
}

/**
 * The upstream request of a route, without what the lifecycle adds (base URL, key): its path is the
 * route's own (`/chat/completions`), which the provider's protocol places (an Azure deployment's URL).
 */
export type UpstreamCall = Omit<UpstreamRequest, 'baseUrl' | 'auth'>;

/** What makes one proxied route: how to read its call, what to send upstream, how to read the answer. */
export interface ProxiedRoute<Prepared> {
  readonly logType: string;
  /** The kinds of provider the route can call (OpenAI's wire format: openai and azure). */
  readonly kinds: readonly ProviderKind[];
  /** The model the caller named (prepared), which chooses the provider. */
  model(prepared: Prepared): string;
  /**
   * Validates the call (AppError when refused) and sets call.params; fills call.log with what it learns
   * as it goes. Nothing has gone upstream yet.
   */
  prepare(call: ProxiedCall, input: unknown): Promise<Prepared>;
  /**
   * The upstream request, for the model as the chosen provider knows it (a `name/` prefix removed) and
   * in the provider's API (a chat call to an Anthropic provider is translated to its Messages API).
   */
  upstreamCall(prepared: Prepared, model: string, provider: ProviderChoice): UpstreamCall;
  /**
   * A successful upstream answer → the client's answer; sets the log's outcome (output, tokens, cost).
   * Throws an AppError (e.g. 502) when the answer cannot be used.
   */
  answer(prepared: Prepared, upstream: UpstreamResponse, call: ProxiedCall): Promise<ProxyResponse>;
  /**
   * Completes the log with what the route works out alongside the upstream call (a transcription's
   * audio duration); awaited before the log is recorded, whatever the outcome. Must not throw.
   */
  settle?(prepared: Prepared, call: ProxiedCall): Promise<void>;
  /** Whether this call's answer is an event stream (then streamReader reads it). */
  streams?(prepared: Prepared): boolean;
  /**
   * The reader of a streamed answer's events: fills the log as they arrive and completes it when the
   * stream ends. `dispatchedAt`: performance.now() when the call went upstream.
   */
  streamReader?(prepared: Prepared, call: ProxiedCall, dispatchedAt: number): StreamReader;
  /** Called once the call is over, whatever happened (an upload's memory is given back). */
  release?(prepared: Prepared): void;
  /**
   * For a route that started its upstream call while its caller's body arrived (dispatchEarly): the
   * call is valid and its key confirmed, so the rest of the body is written and ended. False when the
   * started body does not match the prepared call (it is then abandoned and upstreamCall sent instead).
   */
  completeEarly?(prepared: Prepared): boolean;
  /**
   * An error answer of the provider's, as the client gets it (a translated call's provider speaks
   * another API); absent: passed on as it came.
   */
  upstreamError?(
    prepared: Prepared,
    upstream: UpstreamResponse,
    call: ProxiedCall,
  ): { contentType: string; body: string } | null;
  /** How the route's answers are cached (docs/api.md "Response cache"); absent: never. */
  cache?: RouteCache<Prepared>;
}

/**
 * Starts a route's upstream call before its caller's body has been read whole, so that a large upload
 * travels to the provider while it arrives instead of after (docs/decisions.md "Speech-to-text"). Only
 * with the organization's registered key: a key in customer_credentials may still follow. The body is
 * not ended here: the lifecycle ends it (completeEarly) once the call is valid and its key is the one
 * used, or destroys it, so a refused call never reaches the provider whole. False when it cannot start
 * (no registered key, no room for the log): the call then goes upstream once read, as usual.
 */
export async function dispatchEarly(
  call: ProxiedCall,
  provider: string,
  request: UpstreamCall & { body: Readable },
): Promise<boolean> {
  const { deps } = call;
  if (call.early !== null || call.prepared) return false;
  let registered;
  try {
    registered = await deps.providerKeys.get(call.auth.organizationId, provider);
    if (registered?.baseUrl) assertUpstreamAllowed(deps.config, registered.baseUrl, 'base_url');
  } catch {
    return false;
  }
  // Checked again after the wait: the call may have been read whole (or refused) meanwhile.
  const key = pickKey(registered?.keys ?? []);
  if (!registered || !key || !deps.writer.hasRoom(1)) return false;
  if (call.early !== null || call.prepared) return false;
  const protocol = protocolOf(registered.kind);
  if (!protocol.uploadsEarly) return false;
  const baseUrl = registered.baseUrl ?? protocol.defaultBaseUrl(deps.config);
  if (baseUrl === null) return false;
  const auth = protocol.headers(key.apiKey);
  const checkAddress = registered.baseUrl !== null;
  const early = { ...request, baseUrl, auth, via: call.via, checkAddress, bodyStillArriving: true };
  const response = deps.upstream.post(early);
  const started: EarlyUpstream = { body: request.body, provider, apiKey: key.apiKey, baseUrl, response, failed: false };
  response.catch(() => {
    started.failed = true;
  });
  call.early = started;
  return true;
}

/** Abandons an early upstream call: its body ends in an error, so the provider never gets it whole. */
function abandonEarly(early: EarlyUpstream): void {
  early.body.destroy(new Error('the call was not sent'));
}

function newLogFields(logId: string, route: ProxiedRoute<unknown>): LogFields {
  return {
    unique_id: logId,
    log_type: route.logType,
    log_method: 'inference',
    provider_id: route.kinds[0],
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

/** A proxied call as it arrived. */
export interface Arrival {
  /** The parsed body, or a RejectedBody when the framework refused it (logged and answered as the route's own refusal). */
  input: unknown;
  /** performance.now() when the call arrived. */
  receivedAt: number;
  /** The unique_id the call's log gets (sent to the client as X-Gatelog-Log-Id before the call ends). */
  logId: string;
  /** The gatelog installations it came through (its X-Gatelog-Via marks). */
  via: readonly string[];
}

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
  { input, receivedAt, logId, via }: Arrival,
): Promise<ProxyResponse> {
  const log = newLogFields(logId, route as ProxiedRoute<unknown>);
  const call: ProxiedCall = {
    deps,
    auth,
    params: emptyPlatformParams(),
    log,
    early: null,
    prepared: false,
    provider: null,
    cache: null,
    via,
  };
  let sentEarly = false;
  let prepared: Prepared | null = null;
  // Exactly one log, even if recording itself fails and the failure is caught below.
  let recorded = false;
  const finish = () => {
    if (recorded) return;
    recorded = true;
    record(call, receivedAt);
  };
  try {
    if (input instanceof RejectedBody) throw input.error;
    try {
      prepared = await route.prepare(call, input);
    } finally {
      call.prepared = true;
    }
    const model = route.model(prepared);
    const targets = await planTargets(deps, auth, call.params, route.kinds, model, call.provider, call.early?.apiKey);
    assertLogRoom(deps);
    call.cache = await callCache(call, route, prepared, targets[0]);
    if (call.cache !== null && route.cache) {
      const started = performance.now();
      useTarget(call, targets[0], targets[0].credential, false);
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
      if (res !== null) {
        // Answered from the cache: no try at all. The log is the stored answer's, at no cost.
        call.cache.status = 'HIT';
        log.cache_hit = true;
        log.cost = 0;
        log.routing_time = seconds(receivedAt, started);
        log.latency = seconds(started, performance.now());
        if (call.cache.omitLog) recorded = true;
        finish();
        res.headers = { ...res.headers, ...cacheHeader(call) };
        return res;
      }
    }
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
        route.completeEarly?.(prepared!) === true;
      sentEarly ||= useEarly;
      // Timed from here either way: the upload's own time is the caller's, not the provider's.
      const dispatchedAt = performance.now();
      try {
        if (useEarly) return { kind: 'answer', response: await early.response, dispatchedAt };
        if (early !== null && !sentEarly) abandonEarly(early);
        const request = upstreamRequest(route, prepared!, credential);
        request.via = via;
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
        log.routing_time = seconds(receivedAt, dispatchedAt);
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
              finish,
            );
          }
          if (outcome.kind === 'answer') return await wholeAnswer(route, prepared, call, outcome.response, finish);
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
    return await wholeAnswer(route, prepared, call, last.response, finish);
  } catch (err) {
    log.status_code = err instanceof AppError ? err.status : 500;
    log.error_message = err instanceof AppError ? err.message : 'internal error';
    if (prepared !== null) await route.settle?.(prepared, call);
    finish();
    throw err;
  } finally {
    if (call.early !== null && !sentEarly) abandonEarly(call.early);
    if (prepared !== null) route.release?.(prepared);
  }
}

/** The log and the call as of the try about to be made. */
function useTarget(call: ProxiedCall, target: Target, credential: ResolvedCredential, fallback: boolean): void {
  const { log } = call;
  call.provider = credential.provider;
  log.provider_id = credential.provider.name;
  log.used_custom_credential = credential.usedCustomCredential;
  if (fallback || target.model !== log.model) log.model = attemptedModel(target.model) ?? log.model;
}

function failureMessage(call: ProxiedCall, outcome: TryOutcome): string {
  if (outcome.kind === 'error') return outcome.error.message;
  if (outcome.kind === 'answer') return upstreamError(call, outcome.response).message;
  return '';
}

/** How a route's answers are cached (docs/api.md "Response cache"): whole, or in parts. */
export type RouteCache<Prepared> = WholeCache<Prepared> | PartsCache<Prepared>;

/** A route whose calls are cached whole (a chat completion). */
export interface WholeCache<Prepared> {
  parts?: undefined;
  /**
   * The request as it decides the answer: what goes upstream, without `stream`, `stream_options`, the
   * model (the key has the provider's) and the platform parameters; null: this call's answer is not the
   * request's alone (a Responses call in a conversation), and the call is not cached.
   */
  request(prepared: Prepared): unknown;
  /** A stored answer → the client's, in the form the call asked for (JSON, or a stream replayed); fills the log. */
  replay(prepared: Prepared, stored: string, call: ProxiedCall): Promise<ProxyResponse>;
}

/** A route that caches parts of a call (an embeddings call's items) rather than the whole. */
export interface PartsCache<Prepared> {
  /**
   * Looks the parts up (keys made of `base` and each part) and answers the call when every part was
   * found; else null, with call.cache.status PARTIAL when some were, and the call goes upstream for the
   * rest (the route's upstreamCall and answer see what was found).
   */
  parts(prepared: Prepared, call: ProxiedCall, base: Record<string, unknown>): Promise<ProxyResponse | null>;
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

function cacheHeader(call: ProxiedCall): Record<string, string> {
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

/** A provider's JSON answer, which must be an object (else a 502: the answer cannot be read). */
export function upstreamObject(body: Buffer): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    parsed = undefined;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new AppError(502, 'upstream_invalid_response', 'The provider answered with a body that is not JSON.');
  }
  return parsed as Record<string, unknown>;
}

/** The route's upstream call with the credential's server and key (set on it: no copy per call). */
function upstreamRequest<Prepared>(
  route: ProxiedRoute<Prepared>,
  prepared: Prepared,
  credential: ResolvedCredential,
): UpstreamRequest {
  const { provider } = credential;
  const request = route.upstreamCall(prepared, provider.model, provider) as UpstreamRequest;
  request.path = protocolOf(provider.kind).path(request.path, provider.model, provider.registered);
  request.baseUrl = credential.baseUrl;
  request.auth = credential.auth;
  request.checkAddress = credential.checkAddress;
  return request;
}

/** A whole upstream answer → the client's: an error passed through as it came, a success read by the route. */
async function wholeAnswer<Prepared>(
  route: ProxiedRoute<Prepared>,
  prepared: Prepared,
  call: ProxiedCall,
  upstream: UpstreamResponse,
  finish: () => void,
): Promise<ProxyResponse> {
  const { log } = call;
  if (upstream.status >= 400) {
    const error = upstreamError(call, upstream);
    log.status_code = error.status;
    log.error_message = error.message;
    await route.settle?.(prepared, call);
    finish();
    const translated = route.upstreamError?.(prepared, upstream, call) ?? null;
    return {
      status: error.status,
      contentType: translated?.contentType ?? upstream.contentType,
      body: translated?.body ?? upstream.body,
      upstreamRequestId: upstream.requestId,
      // The body is the provider's, as it came: this says so (a 401 here is not gatelog refusing a key).
      headers: { ...cacheHeader(call), 'x-gatelog-error-source': 'provider' },
    };
  }
  const res = await route.answer(prepared, upstream, call);
  res.upstreamRequestId = upstream.requestId;
  res.headers = { ...res.headers, ...cacheHeader(call) };
  await route.settle?.(prepared, call);
  finish();
  return res;
}

/**
 * An event stream → the client's answer, at once: the events follow as they arrive, and the call's log
 * is recorded when the stream ends, however it ends (stream-pipeline.ts decides, once).
 */
function streamAnswer(call: ProxiedCall, upstream: UpstreamStream, reader: StreamReader, finish: () => void) {
  const { config } = call.deps;
  let ended!: () => void;
  const endedPromise = new Promise<void>((resolve) => (ended = resolve));
  const body = new StreamPipeline(upstream, reader, {
    idleTimeoutMs: config.streamIdleTimeoutMs,
    keepaliveMs: config.streamKeepaliveMs,
    maxDurationMs: config.streamMaxDurationMs,
    onEnd: () => {
      try {
        finish();
      } finally {
        ended();
      }
    },
  });
  return {
    status: 200,
    contentType: 'text/event-stream; charset=utf-8',
    body,
    headers: { 'cache-control': 'no-cache', ...cacheHeader(call) },
    upstreamRequestId: upstream.requestId,
    ended: endedPromise,
  } satisfies ProxyResponse;
}

/** Queues the call's one log with its platform parameters, and counts it. */
function record(call: ProxiedCall, receivedAt: number): void {
  const { deps, params, log } = call;
  log.metadata = params.metadata;
  log.customer_identifier = params.customerIdentifier;
  log.customer_email = params.customerEmail;
  log.thread_identifier = params.threadIdentifier;
  log.omitContent = params.disableLog;
  deps.writer.enqueue([buildNewLog(log, call.auth, deps.prices, deps.config.logMaxBytes)]);
  const upstream = log.latency ?? 0;
  deps.metrics.proxiedCall(
    log.provider_id ?? '',
    log.model ?? '',
    log.status_code ?? 200,
    upstream,
    seconds(receivedAt, performance.now()) - upstream,
  );
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
    cost: call.cache?.status === 'HIT' ? 0 : (log.cost ?? null),
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
