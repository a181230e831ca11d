/**
 * The route contract and the types of a call in progress: what a proxied route supplies to the core
 * (lifecycle.ts) and what the core hands back to it. Types only; nothing here imports the core.
 */
import type { EventSourceMessage } from 'eventsource-parser';
import type { AuthContext } from '../../auth/authenticator.js';
import type { AppError } from '../../errors.js';
import type { LogFields } from '../../logs/write/new-log.js';
import type { ProviderChoice } from '../../providers/choose-provider.js';
import type { ProviderRoute } from '../../providers/kind.js';
import type { TokenUsage } from '../../providers/usage.js';
import type { Usage } from '../../logs/pricing/price-model.js';
import type { UpstreamRequest, UpstreamResponse } from '../../providers/upstream-client.js';
import type { Readable } from 'node:stream';
import type { RateLease } from '../../limits/rate-limiter.js';
import type { BudgetLease } from '../../budgets/budget-keeper.js';
import type { PlatformParams } from './platform-params.js';
import type { ProxyDeps } from './deps.js';

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
  /** The coding agent's session its headers name (session-header.ts): its thread_identifier unless it names one. */
  readonly session: string | null;
  /** performance.now() when the call arrived. */
  readonly receivedAt: number;
  /** Its one log has been queued (or is not to be: a cache hit with omit_log). */
  recorded: boolean;
  /**
   * gatelog refused it (401, 402, 403 or 429: its key, its model, its rate limit…), as outcome.ts decides:
   * counted by its log's error_code in gatelog_refused_total. A provider's refusal is not gatelog's.
   */
  refused: boolean;
  /** What it used, once its route reported it (usage.ts): what it is priced by. */
  used: CallUsed | null;
  /** What it holds of its rate limits (admit.ts), settled when it ends; null: none applies. */
  rateLease: RateLease | null;
  /** What it holds of its budgets (admit.ts), settled with its cost when it ends; null: none applies. */
  budgetLease: BudgetLease | null;
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
export interface EarlyUpstream {
  readonly body: Readable;
  /** The provider it went to; its body carries the model as the caller named it. */
  readonly provider: string;
  readonly apiKey: string;
  readonly baseUrl: string;
  readonly response: Promise<UpstreamResponse>;
  /** It failed before the call was complete (then the call is sent again, whole). */
  failed: boolean;
  /** Its body was completed: it is the call's first try. */
  sent: boolean;
}

/**
 * The upstream request of a route, without what the lifecycle adds (base URL, key): its path is the
 * route's own (`/chat/completions`), which the provider's protocol places (an Azure deployment's URL).
 */
export type UpstreamCall = Omit<UpstreamRequest, 'baseUrl' | 'auth'>;

/** What makes one proxied route: how to read its call, what to send upstream, how to read the answer. */
export interface ProxiedRoute<Prepared> {
  readonly logType: string;
  /** The route as provider kinds name the ones they serve (kind.ts): it calls providers of those kinds. */
  readonly providerRoute: ProviderRoute;
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
   * A successful upstream answer → the client's answer; fills the log's content from it and reports
   * what it used (reportUsage: the core prices it). Throws an AppError (e.g. 502) when the answer
   * cannot be used.
   */
  answer(prepared: Prepared, upstream: UpstreamResponse, call: ProxiedCall): Promise<RouteAnswer>;
  /**
   * Completes the log with what the route works out alongside the upstream call (a transcription's
   * audio duration); awaited before the log is recorded, whatever the outcome. Must not throw.
   */
  settle?(prepared: Prepared, call: ProxiedCall): Promise<void>;
  /** Whether this call's answer is an event stream (then streamReader reads it). */
  streams?(prepared: Prepared): boolean;
  /**
   * The reader of a streamed answer's events: reads them as they arrive, and tells the core what the
   * answer was when the stream ends. `dispatchedAt`: performance.now() when the call went upstream.
   */
  streamReader?(prepared: Prepared, call: ProxiedCall, dispatchedAt: number): StreamReader;
  /** Called once the call is over, whatever happened (an upload's memory is given back). */
  release?(prepared: Prepared): void;
  /**
   * The most a call may use, asked only when a budget or a token limit applies to it (admit.ts): its
   * prompt as sent and its output limit, or its audio's length. Absent: a call that uses nothing.
   */
  demand?(prepared: Prepared): CallDemand;
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

/** What a call may use at most, before it goes upstream (ProxiedRoute.demand). */
export interface CallDemand {
  /** The prompt's texts as sent (the core counts their tokens), or its count of tokens when known. */
  prompt: readonly string[] | number;
  /** The most output the call asked for (max_tokens and the like); null: it set none. */
  maxOutputTokens: number | null;
  /** A call priced by its audio's length (a transcription): the seconds of audio, null when unreadable. */
  audioSeconds?: Promise<number | null>;
}

/** A route's reading of a whole successful answer: the client's answer, and what the cache may keep. */
export interface RouteAnswer {
  response: ProxyResponse;
  /** The answer as the cache keeps it, made only if it is kept; absent: this answer is never kept. */
  keep?: () => string;
}

/** What a call used, as its route read the answer: the core counts what is missing and prices it (usage.ts). */
export interface UsageReport {
  /** The model priced. */
  model: string;
  /** The provider's counts; null: it gave none. */
  usage: TokenUsage | null;
  /** The texts counted locally for a count the provider left out; null: nothing to count. */
  texts: (() => { prompt: string[]; completion: string[] }) | null;
  /** Seconds spent generating (a stream's, from its first output); null: the call's latency. */
  generationSeconds: number | null;
  /** Seconds of audio (a transcription, priced by the second). */
  audioSeconds?: number;
}

/** What a call used, as it is priced. */
export type CallUsed = Omit<Usage, 'providerId' | 'at'>;

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
  /** The coding agent's session its headers name (session-header.ts), or null. */
  session: string | null;
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

/** How a stream ended, as its log records it. */
export type StreamOutcome =
  /** The provider ended its answer and the client got it (or got its last event, then left). */
  (
    | { kind: 'ended' }
    /** The client went away before its answer's last byte reached it: the provider's call was aborted. */
    | { kind: 'client_gone' }
    /** The provider's connection failed, an event could not be read, or the provider fell silent. */
    | { kind: 'failed'; error: AppError; code: StreamFaultCode }
  ) & {
    /** performance.now() when the provider's side ended (its end, its failure, or its call aborted). */
    at: number;
  };

/** Adds events to the client's stream, before the event being read. */
export interface EventWriter {
  write(text: string): void;
}

/** What the stream pipeline asks of the events of a stream it passes on. */
export interface StreamEvents {
  /**
   * An event from the provider: 'forward' passes its bytes on, 'drop' holds them back. Throws an
   * AppError for an event that cannot be read (the stream then ends as failed).
   */
  event(message: EventSourceMessage, out: EventWriter): 'forward' | 'drop';
  /**
   * The event that tells the client the provider's stream broke off, in the provider's API (Anthropic's
   * `event: error`); absent: OpenAI's shape (errorEvent below).
   */
  errorEvent?(error: AppError, code: StreamFaultCode): string;
  /**
   * The provider's last event has been read ([DONE], message_stop, a terminal Responses event): the
   * answer is whole once the client has it. Absent: the stream's own end is its last byte.
   */
  complete?(): boolean;
}

/** What a route does with the events of a stream it proxies, and with the answer they made. */
export interface StreamReader extends StreamEvents {
  /** performance.now() of the answer's first output, once there was one. */
  readonly firstOutputAt: number | null;
  /**
   * What the provider's own stream said went wrong (an error event in it, its last event missing), as
   * the log's error with a 502; null: nothing. Asked once the stream ended without a failure of its own.
   */
  fault(): StreamFault | null;
  /**
   * Once, when the stream is over (the log's status already set from how it ended): fills the log's
   * content from the answer put back together, and says what it used and what the cache may keep.
   */
  end(call: ProxiedCall, generationSeconds: number | null): Promise<StreamEnd>;
}

/** What a stream's reader tells the core once the stream is over. */
export interface StreamEnd {
  usage: UsageReport;
  /** The whole answer as the cache keeps it (made only if it is kept); absent: not whole, not kept. */
  keep?: () => string;
}

/** Why gatelog ended a stream the provider did not end. */
export type StreamFaultCode = 'stream_interrupted' | 'stream_timeout';

/**
 * What went wrong in a stream the provider ended, as the log keeps it: the message, and the code — the
 * provider's own in its error event (else upstream_error), or stream_interrupted for a stream that
 * ended before its last event.
 */
export interface StreamFault {
  message: string;
  code: string;
}
