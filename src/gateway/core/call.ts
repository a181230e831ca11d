/**
 * A proxied call in progress: what the core and its route learn of it as it goes (ProxiedCall), what it
 * used, and the answer it gives its client. Types only; nothing here imports the core.
 */
import type { AuthContext } from '../../auth/authenticator.js';
import type { LogFields } from '../../logs/write/new-log.js';
import type { ProviderChoice } from '../../providers/choose-provider.js';
import type { TokenUsage } from '../../providers/usage.js';
import type { Usage } from '../../logs/pricing/price-model.js';
import type { UpstreamResponse } from '../../providers/upstream-client.js';
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

/** What a call used, as it is priced. */
export type CallUsed = Omit<Usage, 'providerId' | 'at'>;

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
