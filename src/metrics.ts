/**
 * What GET /metrics shows (docs/api.md "Metrics"; the route is http/routes/metrics.ts). Counters on the
 * hot path are prom-client counters and histograms with bounded label sets; the log writer's figures
 * are read from it when scraped, so writing logs costs nothing extra.
 */
import { type Aggregator, collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { LogWriter } from './logs/write/writer.js';
import type { ResponseCache } from './cache/response-cache.js';
import type { RetentionSweep } from './retention/sweep.js';

/** Distinct model labels kept; more become "other", so a caller cannot grow the series without end. */
const MAX_MODEL_LABELS = 100;
/** Seconds: upstream calls take from milliseconds to minutes; gatelog's own part a fraction of a millisecond up. */
const UPSTREAM_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const ADDED_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

/** What /metrics reads of the circuit breaker (gateway/core/circuit-breaker.ts) when scraped. */
export interface BreakerFigures {
  /** Upstreams whose circuit is open now, by host: how many. */
  openCircuits(): ReadonlyMap<string, number>;
  /** Tries that skipped an open circuit. */
  readonly skipped: number;
}

export type DatabaseErrorKind = 'busy' | 'unavailable' | 'query_timeout' | 'other';

export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly proxied: Counter<'provider' | 'model' | 'status'>;
  private readonly refused: Counter<'reason'>;
  private readonly passedThrough: Counter<'route' | 'provider' | 'status'>;
  private readonly upstreamSeconds: Histogram<'provider'>;
  private readonly addedSeconds: Histogram<'provider'>;
  private readonly databaseErrors: Counter<'kind'>;
  private readonly models = new Set<string>();
  /** In a worker of several: every worker's figures summed (cluster/cluster-metrics.ts); else null. */
  private gatherer: (() => Promise<string | null>) | null = null;

  constructor(writer: LogWriter) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'gatelog_' });
    this.requests = new Counter({
      name: 'gatelog_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.proxied = new Counter({
      name: 'gatelog_proxied_calls_total',
      help: 'Proxied calls logged, by provider, model and status (the status the caller got)',
      labelNames: ['provider', 'model', 'status'],
      registers,
    });
    this.refused = new Counter({
      name: 'gatelog_refused_total',
      help: 'Proxied calls gatelog refused (401, 402, 403, 429), by reason: the error code their logs keep',
      labelNames: ['reason'],
      registers,
    });
    this.passedThrough = new Counter({
      name: 'gatelog_passthrough_calls_total',
      help: "Calls passed to a provider without a log (Anthropic's count_tokens), by route, provider and status (the status the caller got)",
      labelNames: ['route', 'provider', 'status'],
      registers,
    });
    this.upstreamSeconds = new Histogram({
      name: 'gatelog_upstream_latency_seconds',
      help: "Time from dispatching a proxied call to the end of the provider's answer",
      labelNames: ['provider'],
      buckets: UPSTREAM_BUCKETS,
      registers,
    });
    this.addedSeconds = new Histogram({
      name: 'gatelog_added_latency_seconds',
      help: "Time gatelog adds to a proxied call: from its arrival to its answer being ready, less the provider's time",
      labelNames: ['provider'],
      buckets: ADDED_BUCKETS,
      registers,
    });
    this.databaseErrors = new Counter({
      name: 'gatelog_database_errors_total',
      help: 'Requests answered 5xx because of the database: busy, unavailable, past the query budget, or another error',
      labelNames: ['kind'],
      registers,
    });
    // The log writer's figures, read from it when scraped.
    this.scrapedValue('gatelog_log_queue_depth', 'Logs waiting to be written', () => writer.backlog);
    this.scrapedTotal('gatelog_log_batches_total', 'Batches of logs committed', () => writer.stats.batches);
    this.scrapedTotal('gatelog_logs_written_total', 'Logs written to the database', () => writer.stats.written);
    this.scrapedTotal(
      'gatelog_log_write_retries_total',
      'Failed attempts to write a batch (retried later, or split to find a refused log)',
      () => writer.stats.failedAttempts,
    );
    this.scrapedTotal(
      'gatelog_logs_dropped_total',
      'Logs the database refused (kept as dead letters, see /health)',
      () => writer.dropped,
    );
  }

  /** A worker of several answers /metrics with every worker's figures, as `gather` sums them. */
  gatherWith(gather: () => Promise<string | null>): void {
    this.gatherer = gather;
  }

  /**
   * The text /metrics answers: this process's figures, or in a worker of several every worker's summed;
   * null when they could not be gathered (the scrape fails rather than show one worker's alone).
   */
  exposition(): Promise<string | null> {
    return this.gatherer ? this.gatherer() : this.registry.metrics();
  }

  request(method: string, route: string, status: number): void {
    this.requests.inc({ method, route, status: String(status) });
  }

  proxiedCall(provider: string, model: string, status: number, upstreamSeconds: number, addedSeconds: number): void {
    this.proxied.inc({ provider, model: this.modelLabel(model), status: String(status) });
    if (upstreamSeconds > 0) this.upstreamSeconds.observe({ provider }, upstreamSeconds);
    this.addedSeconds.observe({ provider }, Math.max(0, addedSeconds));
  }

  /** A proxied call gatelog refused; `reason` is one of gatelog's own error codes (a bounded set). */
  refusedCall(reason: string): void {
    this.refused.inc({ reason });
  }

  /**
   * A call passed to a provider without a log (it is not a model call); `route`: its documented path,
   * `provider` '' when it was refused before one was chosen.
   */
  passthroughCall(route: string, provider: string, status: number): void {
    this.passedThrough.inc({ route, provider, status: String(status) });
  }

  /** The circuit breaker's open upstreams and skipped calls, read when scraped. */
  watchBreaker(breaker: BreakerFigures): void {
    const registers = [this.registry];
    new Gauge({
      name: 'gatelog_circuit_open',
      help: 'Provider upstreams this node skips now after failures in a row, by host',
      labelNames: ['upstream'],
      registers,
      collect() {
        this.reset();
        for (const [upstream, count] of breaker.openCircuits()) this.set({ upstream }, count);
      },
    });
    this.scrapedTotal(
      'gatelog_circuit_skipped_total',
      'Tries of a call that skipped an upstream whose circuit was open',
      () => breaker.skipped,
    );
  }

  /** What the retention sweep removed, and its last run on this node, read when scraped. */
  watchRetention(sweep: RetentionSweep): void {
    this.scrapedTotal(
      'gatelog_retention_deleted_logs_total',
      'Logs the retention sweep deleted',
      () => sweep.totals.deleted_logs,
    );
    this.scrapedTotal(
      'gatelog_retention_cleared_logs_total',
      'Logs whose content the sweep cleared',
      () => sweep.totals.cleared_logs,
    );
    this.scrapedTotal(
      'gatelog_retention_failures_total',
      'Retention sweep runs that failed',
      () => sweep.totals.failures,
    );
    // Summed over a node's workers as the latest (the most recent sweep), not added.
    this.scrapedValue(
      'gatelog_retention_last_run_timestamp_seconds',
      'When the last retention sweep on this node started (0: none yet)',
      () => (sweep.lastRun ? Date.parse(sweep.lastRun.started_at) / 1000 : 0),
      'max',
    );
    this.scrapedValue(
      'gatelog_retention_last_run_duration_seconds',
      'How long the last retention sweep on this node took',
      () => (sweep.lastRun ? sweep.lastRun.duration_ms / 1000 : 0),
      'max',
    );
  }

  /** The response cache's hits, misses, writes, errors and evictions, read when scraped. */
  watchCache(cache: ResponseCache): void {
    const registers = [this.registry];
    const stats = cache.stats;
    new Counter({
      name: 'gatelog_cache_lookups_total',
      help: 'Response-cache lookups (an embeddings item counts as one), by result',
      labelNames: ['result'],
      registers,
      collect() {
        this.reset();
        this.inc({ result: 'hit' }, stats.hits);
        this.inc({ result: 'miss' }, stats.misses);
      },
    });
    this.scrapedTotal('gatelog_cache_writes_total', 'Answers stored in the response cache', () => stats.writes);
    this.scrapedTotal(
      'gatelog_cache_errors_total',
      'Response-cache reads and writes that failed (a failed read is a miss; the call goes on)',
      () => stats.errors,
    );
    this.scrapedTotal(
      'gatelog_cache_evicted_total',
      'Response-cache entries removed: expired, or evicted to keep under GATELOG_CACHE_MAX_MB',
      () => stats.evicted,
    );
    this.scrapedTotal(
      'gatelog_cache_skipped_total',
      "Answers not stored in the response cache: larger than GATELOG_CACHE_MAX_MB alone, past their organization's room, or the write queue full",
      () => stats.skipped,
    );
  }

  /** A counter that shows a total kept elsewhere, read when scraped. */
  private scrapedTotal(name: string, help: string, read: () => number): void {
    new Counter({
      ...this.scraped(name, help),
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  }

  /** A gauge that shows a figure kept elsewhere, read when scraped; `aggregator`: how workers' values combine. */
  private scrapedValue(name: string, help: string, read: () => number, aggregator: Aggregator = 'sum'): void {
    new Gauge({
      ...this.scraped(name, help),
      aggregator,
      collect() {
        this.set(read());
      },
    });
  }

  private scraped(name: string, help: string): { name: string; help: string; registers: Registry[] } {
    return { name, help, registers: [this.registry] };
  }

  databaseError(kind: DatabaseErrorKind): void {
    this.databaseErrors.inc({ kind });
  }

  private modelLabel(model: string): string {
    if (this.models.has(model)) return model;
    if (this.models.size >= MAX_MODEL_LABELS || model.length > 128) return 'other';
    this.models.add(model);
    return model;
  }
}
