/** What the proxied-call lifecycle and its routes use of the service (core/lifecycle.ts). */
import type { AdmissionLedger } from '../../admission/admission-ledger.js';
import type { AppDeps } from '../../deps.js';
import type { Metrics } from '../../metrics.js';
import type { ProviderKeyCache } from '../../providers/key-cache.js';
import type { ProviderRegistry } from '../../providers/registry.js';
import type { AudioDurations } from '../transcription/audio-duration.js';
import type { ResponseCache } from '../../cache/response-cache.js';
import type { SettingsCache } from '../../org-settings/settings.js';
import type { RateLimiter } from '../../limits/rate-limiter.js';
import type { BudgetKeeper } from '../../budgets/budget-keeper.js';
import type { CircuitBreaker } from './circuit-breaker.js';
import type { TokenCounter } from '../tokens/token-counter.js';
import type { UploadBudget } from '../transcription/upload-budget.js';

export type ProxyDeps = Pick<AppDeps, 'db' | 'config' | 'prices' | 'writer' | 'upstream' | 'secretKey'> & {
  providerKeys: ProviderKeyCache;
  /** The provider kinds this gatelog knows: how each is called, the routes that call it. */
  providerKinds: ProviderRegistry;
  /** Audio uploads held in memory, all calls together. */
  uploads: UploadBudget;
  tokens: TokenCounter;
  /** Audio durations, read on worker threads. */
  durations: AudioDurations;
  metrics: Metrics;
  /** Upstreams that keep failing, skipped for a while (per node). */
  breaker: CircuitBreaker;
  /** The response cache's store, shared by every node through the database. */
  cache: ResponseCache;
  /** Organizations' settings (the cache's defaults), remembered for a second. */
  settings: SettingsCache;
  /** Rate limits of keys, customers and organizations, shared by every node through the database. */
  limits: RateLimiter;
  /** Budgets of keys, customers and organizations: reservations and spend in the database. */
  budgets: BudgetKeeper;
  /** A call's budgets and rate limits taken together: one statement (PostgreSQL) or transaction (SQLite). */
  admission: AdmissionLedger;
};
