/**
 * The composition root: every service gatelog runs, built once from the configuration, and stopped in
 * the order their work depends on. `gatelog serve`, the test harness and the in-process benchmarks all
 * build gatelog here; a test's needs (a plugin that watches or fails queries, another inserter, the log
 * lines captured) are overrides, not copies of this.
 */
import type { FastifyBaseLogger } from 'fastify';
import { Authenticator } from './auth/authenticator.js';
import { resolveSecretKey } from './auth/secret-key.js';
import { ResponseCache } from './cache/response-cache.js';
import type { Config } from './config.js';
import type { DbHandle } from './db/connect.js';
import { openDatabase } from './db/open.js';
import type { AppDeps } from './deps.js';
import { AudioDurations } from './gateway/transcription/audio-duration.js';
import { CircuitBreaker } from './gateway/core/circuit-breaker.js';
import { createUpstreamClient } from './gateway/core/loop-guard.js';
import { loadPriceTable } from './logs/pricing/price-table.js';
import type { ProxyDeps } from './gateway/core/deps.js';
import { TokenCounter } from './gateway/tokens/token-counter.js';
import { UploadBudget } from './gateway/transcription/upload-budget.js';
import { createLogger } from './logger.js';
import { SearchIndexer } from './logs/search/indexer.js';
import { TailHub } from './logs/tail/hub.js';
import { DeadLetterStore } from './logs/write/dead-letters.js';
import { inserterFor, type LogInserter } from './logs/write/inserter.js';
import { LogWriter, type LogWriterOptions } from './logs/write/writer.js';
import { Metrics } from './metrics.js';
import { SettingsCache } from './org-settings/settings.js';
import { AdmissionLedger } from './admission/admission-ledger.js';
import { Buckets } from './limits/buckets.js';
import { BudgetAlerts } from './budgets/alerts.js';
import { BudgetKeeper } from './budgets/budget-keeper.js';
import { BudgetStore } from './budgets/budget-store.js';
import { Ledger } from './budgets/ledger.js';
import { RateLimitRules } from './limits/rate-limit-rules.js';
import { RateLimiter } from './limits/rate-limiter.js';
import { ProviderKeyCache } from './providers/key-cache.js';
import { BUILT_IN_PROVIDER_KINDS, type ProviderRegistry } from './providers/registry.js';
import { RetentionSweep } from './retention/sweep.js';
import { createMonthsAhead } from './db/log-partitions.js';
import { RollupBackfill } from './logs/rollups/rollup-backfill.js';

export interface ServiceOverrides {
  /** The service log; by default one at GATELOG_LOG_LEVEL on stdout. */
  logger?: FastifyBaseLogger;
  /** The opened, migrated database as every service will use it (a test adds a Kysely plugin). */
  database?: (opened: DbHandle) => DbHandle;
  /** How the log writer stores a batch; by default the fastest way the database offers (inserterFor). */
  inserter?: (db: DbHandle) => LogInserter;
  /** The log writer's batching and retry settings. */
  writer?: Omit<LogWriterOptions, 'deadLetters'>;
  /** The provider kinds it calls; by default gatelog's own (BUILT_IN_PROVIDER_KINDS). */
  providerKinds?: ProviderRegistry;
  /** false: the search indexer is built but not started (a test runs it when it wants). Default true. */
  indexInBackground?: boolean;
  /** The schema is up to date already (a worker process: its primary migrated it); opening skips the migrator. */
  schemaReady?: boolean;
}

export interface Services extends AppDeps, ProxyDeps {
  readonly searchIndexer: SearchIndexer;
  readonly metrics: Metrics;
  readonly retention: RetentionSweep;
  readonly authenticator: Authenticator;
  /** The live tails of this node, woken by its writer's commits. */
  readonly tails: TailHub;
  /**
   * Ends what would keep a graceful stop waiting: the background sweep and indexer stop taking new
   * work and every live tail (a stream that never ends by itself) is closed. Called before the server
   * waits for its requests to finish.
   */
  quiesce(): Promise<void>;
  /** Everything, once the server has stopped: every acknowledged log is written before the database closes. */
  close(): Promise<void>;
}

export async function createServices(config: Config, overrides: ServiceOverrides = {}): Promise<Services> {
  const logger = overrides.logger ?? createLogger(config.logLevel);
  const prices = loadPriceTable(config.pricingFile);
  prices.onUnpriced = (model) =>
    logger.warn({ model }, 'no price for this model: its calls cost 0 (set one in GATELOG_PRICING_FILE)');
  // The database first: the secret key file lives beside a SQLite file, in the directory opening makes.
  const { handle: opened } = await openDatabase(config.database, {
    queryTimeoutMs: config.queryTimeoutMs,
    processes: config.workerSlot === null ? 1 : config.workers,
    migrate: !overrides.schemaReady,
  });
  const db = overrides.database?.(opened) ?? opened;
  try {
    // The logs' monthly partitions of this month and the next ones (PostgreSQL; docs/scaling.md).
    if (db.dialect === 'postgres') await createMonthsAhead(db.db);
    const secretKey = resolveSecretKey(config);
    const deadLetters = new DeadLetterStore(db.db);
    await deadLetters.init();
    if (deadLetters.count > 0)
      logger.warn({ dead_letters: deadLetters.count }, 'the dead-letter store holds refused logs');
    const inserter = overrides.inserter?.(db) ?? inserterFor(db);
    return assemble(config, logger, prices, db, secretKey, inserter, deadLetters, overrides);
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
}

function assemble(
  config: Config,
  logger: FastifyBaseLogger,
  prices: AppDeps['prices'],
  db: DbHandle,
  secretKey: Buffer,
  inserter: LogInserter,
  deadLetters: DeadLetterStore,
  overrides: ServiceOverrides,
): Services {
  const writer = new LogWriter(inserter, logger, { ...overrides.writer, deadLetters });
  const upstream = createUpstreamClient(config, secretKey);
  // Fills the search index in the background, off the write path (docs/decisions.md "Search index").
  const searchIndexer = new SearchIndexer(db, writer, logger);
  const metrics = new Metrics(writer);
  const retention = new RetentionSweep(
    db,
    {
      retentionDays: config.retentionDays,
      contentRetentionDays: config.contentRetentionDays,
      intervalMs: config.retentionIntervalMs,
    },
    logger,
    deadLetters,
  );
  metrics.watchRetention(retention);
  const authenticator = new Authenticator(db.db);
  const tails = new TailHub(db, (credential) => authenticator.stillValid(credential), logger, {
    maxClients: config.tailMaxClients,
    keepaliveMs: config.streamKeepaliveMs,
    queryTimeoutMs: config.queryTimeoutMs,
  });
  const stopWaking = writer.onCommitted(tails.wake);
  const breaker = new CircuitBreaker({ failures: config.circuitFailures ?? 0, cooldownMs: config.circuitCooldownMs });
  metrics.watchBreaker(breaker);
  const cache = new ResponseCache(db.db, config.cacheMaxBytes);
  metrics.watchCache(cache);
  const tokens = new TokenCounter();
  const buckets = new Buckets(db);
  const ledger = new Ledger(db);
  const limits = new RateLimiter(buckets, new RateLimitRules(db.db));
  const budgetStore = new BudgetStore(db.db, secretKey);
  const budgets = new BudgetKeeper(budgetStore, ledger, config.budgetHoldMs);
  const admission = new AdmissionLedger(db, ledger, buckets);
  const alerts = new BudgetAlerts(db.db, budgetStore, {
    firstRetryMs: config.alertRetryMs,
    pollMs: config.alertPollMs,
  });
  budgets.onSpend = (crossing) => alerts.crossed(crossing);
  budgets.start(Math.min(config.budgetHoldMs, 30_000));
  limits.start();
  alerts.start();
  const durations = new AudioDurations();

  // The retention sweep, the search indexer and the filling of older logs' rollups take turns through
  // locks on PostgreSQL; on SQLite they count on being the file's only sweeper and indexer, so of the
  // workers of one `serve` only the first runs them (its replacement, if it crashes).
  const background = config.database.kind === 'postgres' || config.workerSlot === null || config.workerSlot === 1;
  if (background) retention.start();
  // Rollups of the logs stored before they existed (a database from an earlier version).
  const backfill = new RollupBackfill(db.bulk, logger);
  if (background) backfill.start();
  if (background && (overrides.indexInBackground ?? true)) searchIndexer.start();

  let quiescing: Promise<void> | null = null;
  const quiesce = () =>
    (quiescing ??= (async () => {
      stopWaking();
      tails.close();
      await retention.stop();
      await backfill.stop();
    })());
  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      await quiesce();
      await writer.close();
      await searchIndexer.stop();
      await cache.settled();
      limits.stop();
      await limits.settled();
      budgets.stop();
      await budgets.settled();
      await alerts.stop();
      await tokens.close();
      await durations.close();
      await upstream.close();
      await db.close();
    })());

  return {
    config,
    db,
    secretKey,
    logger,
    prices,
    writer,
    upstream,
    searchIndex: searchIndexer,
    searchIndexer,
    metrics,
    retention,
    authenticator,
    tails,
    providerKeys: new ProviderKeyCache(db.db, secretKey),
    providerKinds: overrides.providerKinds ?? BUILT_IN_PROVIDER_KINDS,
    tokens,
    durations,
    uploads: new UploadBudget(config.uploadMemoryBytes),
    breaker,
    cache,
    settings: new SettingsCache(db.db),
    limits,
    budgets,
    admission,
    quiesce,
    close,
  };
}
