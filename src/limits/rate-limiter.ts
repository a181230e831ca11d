/**
 * Rate limits applied to a proxied call (docs/api.md "Rate limits"): its key's, its customer's and its
 * organization's, each a bucket of requests and tokens per minute (buckets.ts). A call is drawn from
 * every one that applies, or from none: one that does not fit gives back what the others took, and the
 * call is refused with 429 and how long to wait. Its tokens are counted as reserved when it is admitted
 * and corrected to what it used when it ends.
 */
import type { RateLimits } from '../auth/key-controls.js';
import { AppError } from '../errors.js';
import type { Buckets } from './buckets.js';
import { type BucketState, type Draw, WINDOW_MS } from './draw.js';
import type { BucketStep } from '../admission/steps.js';
import type { RateLimitRules } from './rate-limit-rules.js';
import { BatchedLater } from '../util/batched-later.js';

/** How long a correction waits for others to be written with: calls ending together share a transaction. */
const CORRECT_AFTER_MS = 20;

/** One limit that applies to a call: its bucket, and how a refusal names it. */
export interface AppliedLimit {
  bucket: string;
  /** "this key", "the customer 'acme'", "the organization". */
  name: string;
  limits: RateLimits;
}

export interface LimitedCaller {
  keyId: string;
  organizationId: string;
  rateLimits: RateLimits;
}

export class RateLimiter {
  /** Corrections not yet written, a batch at a time: a stop waits for them (settled). */
  private readonly corrections = new BatchedLater<[string, Draw]>((batch) => this.correct(batch), CORRECT_AFTER_MS);

  constructor(
    private readonly buckets: Buckets,
    readonly rules: RateLimitRules,
  ) {}

  private sweeper: NodeJS.Timeout | null = null;

  /**
   * Deletes, every `everyMs`, the buckets that have been empty for a while: a bucket drained before the
   * present is the same as none, and a customer seen once leaves no row behind.
   */
  start(everyMs = 60_000): void {
    this.sweeper ??= setInterval(() => {
      this.buckets.sweep(Date.now() - WINDOW_MS).catch(() => undefined);
    }, everyMs);
    this.sweeper.unref();
  }

  stop(): void {
    if (this.sweeper !== null) clearInterval(this.sweeper);
    this.sweeper = null;
  }

  /** Once every correction queued so far is written (or failed: a lost correction only frees tokens late). */
  settled(): Promise<void> {
    return this.corrections.settled();
  }

  /** Moves a bucket's clocks later, with other calls' corrections. */
  adjustLater(bucket: string, change: Draw): void {
    this.corrections.add([bucket, change]);
  }

  private correct(batch: readonly [string, Draw][]): Promise<void> {
    const changes = new Map<string, Draw>();
    for (const [bucket, change] of batch) {
      const sum = changes.get(bucket);
      changes.set(
        bucket,
        sum === undefined
          ? { ...change }
          : { requestsMs: sum.requestsMs + change.requestsMs, tokensMs: sum.tokensMs + change.tokensMs },
      );
    }
    return this.buckets.adjust(changes);
  }

  /** The limits that apply to a call of `caller` for `customer`; none, mostly. */
  async applying(caller: LimitedCaller, customer: string | null): Promise<AppliedLimit[]> {
    const applied: AppliedLimit[] = [];
    if (hasLimit(caller.rateLimits))
      applied.push({ bucket: `key:${caller.keyId}`, name: 'this key', limits: caller.rateLimits });
    const { customer: customerLimits, organization } = await this.rules.forCall(caller.organizationId, customer);
    if (customer !== null && customerLimits !== null && hasLimit(customerLimits)) {
      applied.push({
        bucket: `customer:${caller.organizationId}:${customer}`,
        name: `the customer '${customer}'`,
        limits: customerLimits,
      });
    }
    if (organization !== null && hasLimit(organization)) {
      applied.push({ bucket: `organization:${caller.organizationId}`, name: 'the organization', limits: organization });
    }
    return applied;
  }

  /**
   * The steps that draw a call of `tokens` (its reservation) from every limit (taken all or none with
   * the call's other admission steps: AdmissionLedger). A call larger than a minute of a limit is
   * refused at once (429, never to be retried).
   */
  plan(applied: readonly AppliedLimit[], tokens: number): BucketStep[] {
    for (const limit of applied) {
      const tpm = limit.limits.tokens_per_minute;
      if (tpm !== undefined && tokens > tpm) throw tooLarge(limit, tokens, tpm);
    }
    const now = Date.now();
    return applied.map((limit) => ({
      kind: 'bucket',
      bucket: limit.bucket,
      now,
      draw: drawOf(limit.limits, tokens),
      limit: now + WINDOW_MS,
    }));
  }

  /** What a call holds once its plan's steps were taken, with the buckets' states they left. */
  lease(
    applied: readonly AppliedLimit[],
    tokens: number,
    steps: readonly BucketStep[],
    states: readonly BucketState[],
  ): RateLease {
    return new RateLease(this, applied, tokens, limitHeaders(applied, states, steps[0]?.now ?? Date.now()));
  }

  /** The refusal of the plan's step `at`, which did not fit: 429 rate_limited with how long to wait. */
  refused(applied: readonly AppliedLimit[], steps: readonly BucketStep[], at: number): Promise<AppError> {
    const step = steps[at]!;
    return this.refusal(applied[at]!, step.draw, step.now);
  }

  private async refusal(limit: AppliedLimit, draw: Draw, now: number): Promise<AppError> {
    const state = await this.buckets.peek(limit.bucket, now);
    const free = now + WINDOW_MS;
    const waitMs = Math.max(
      Math.max(state.requestsAt, now) + draw.requestsMs - free,
      Math.max(state.tokensAt, now) + draw.tokensMs - free,
      1,
    );
    const seconds = Math.ceil(waitMs / 1000);
    const which = Math.max(state.requestsAt, now) + draw.requestsMs > free ? 'requests' : 'tokens';
    const perMinute = which === 'requests' ? limit.limits.requests_per_minute : limit.limits.tokens_per_minute;
    return new AppError(
      429,
      'rate_limited',
      `Rate limit reached for ${limit.name}: ${perMinute} ${which} per minute. Retry in ${seconds} s.`,
      null,
      {
        'retry-after': String(seconds),
        'retry-after-ms': String(Math.ceil(waitMs)),
        ...limitHeaders([limit], [state], now),
      },
    );
  }
}

/** What a call holds of its limits until it ends. */
export class RateLease {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly applied: readonly AppliedLimit[],
    private readonly reserved: number,
    /** OpenAI's x-ratelimit-* headers for the tightest limits, as the call was admitted. */
    readonly headers: Record<string, string>,
  ) {}

  /** Replaces the tokens reserved by those used (0 for a call that failed before any answer). */
  settle(usedTokens: number): void {
    const change = usedTokens - this.reserved;
    if (change === 0) return;
    for (const limit of this.applied) {
      const tpm = limit.limits.tokens_per_minute;
      if (tpm !== undefined)
        this.limiter.adjustLater(limit.bucket, { requestsMs: 0, tokensMs: (change * WINDOW_MS) / tpm });
    }
  }
}

export function hasLimit(limits: RateLimits): boolean {
  return limits.requests_per_minute !== undefined || limits.tokens_per_minute !== undefined;
}

/** Whether any of `applied` counts tokens (then the call's reservation must be counted). */
export function countsTokens(applied: readonly AppliedLimit[]): boolean {
  return applied.some((limit) => limit.limits.tokens_per_minute !== undefined);
}

function drawOf(limits: RateLimits, tokens: number): Draw {
  const rpm = limits.requests_per_minute;
  const tpm = limits.tokens_per_minute;
  return {
    requestsMs: rpm === undefined ? 0 : WINDOW_MS / rpm,
    tokensMs: tpm === undefined ? 0 : (tokens * WINDOW_MS) / tpm,
  };
}

function tooLarge(limit: AppliedLimit, tokens: number, tpm: number): AppError {
  // Never passes, however long the caller waits: OpenAI's client is told not to retry it.
  return new AppError(
    429,
    'rate_limited',
    `This call needs up to ${tokens} tokens, more than the ${tpm} tokens per minute of ${limit.name}; ask for fewer (max_tokens) or shorten the prompt.`,
    null,
    { 'x-should-retry': 'false' },
  );
}

/**
 * x-ratelimit-{limit,remaining,reset}-{requests,tokens} of the tightest limit of each kind: the one with
 * the least left. Remaining: what could still be drawn at once; reset: until the bucket is empty again.
 */
export function limitHeaders(
  applied: readonly AppliedLimit[],
  states: readonly BucketState[],
  now: number,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const kind of ['requests', 'tokens'] as const) {
    let tightest: { perMinute: number; remaining: number; resetMs: number } | null = null;
    for (const [index, limit] of applied.entries()) {
      const perMinute = kind === 'requests' ? limit.limits.requests_per_minute : limit.limits.tokens_per_minute;
      const state = states[index];
      if (perMinute === undefined || state === undefined) continue;
      const at = kind === 'requests' ? state.requestsAt : state.tokensAt;
      const interval = WINDOW_MS / perMinute;
      // The small epsilon keeps a whole interval whole despite floating-point division.
      const remaining = Math.max(0, Math.min(perMinute, Math.floor((now + WINDOW_MS - at) / interval + 1e-9)));
      if (tightest === null || remaining < tightest.remaining) {
        tightest = { perMinute, remaining, resetMs: Math.max(0, at - now) };
      }
    }
    if (tightest === null) continue;
    headers[`x-ratelimit-limit-${kind}`] = String(tightest.perMinute);
    headers[`x-ratelimit-remaining-${kind}`] = String(tightest.remaining);
    headers[`x-ratelimit-reset-${kind}`] = duration(tightest.resetMs);
  }
  return headers;
}

/** A duration as OpenAI writes one: "20ms", "8.571s", "1m0s". */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.ceil(ms)}ms`;
  const seconds = Math.round(ms) / 1000;
  if (seconds < 60) return `${Number(seconds.toFixed(3))}s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes}m${Number((seconds - minutes * 60).toFixed(3))}s`;
}
