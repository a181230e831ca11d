/**
 * The route contract: what a proxied route supplies to the core (lifecycle.ts) and what the core hands
 * back to it. The call in progress is call.ts's, a streamed answer's reader stream-contract.ts's.
 * Types only; nothing here imports the core.
 */
import type { ProviderChoice } from '../../providers/choose-provider.js';
import type { ProviderRoute } from '../../providers/kind.js';
import type { UpstreamRequest, UpstreamResponse } from '../../providers/upstream-client.js';
import type { ProxiedCall, ProxyResponse } from './call.js';
import type { StreamReader } from './stream-contract.js';

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
