/**
 * Table types for Kysely. Times are epoch milliseconds (bigint in PostgreSQL, integer in SQLite) and
 * booleans are 0/1 integers in both dialects, so one schema and one set of queries serve both.
 */
import type { Generated, Selectable, Updateable } from 'kysely';

export interface OrganizationsTable {
  id: string;
  name: string;
  created_at: number;
}

export interface ApiKeysTable {
  id: string;
  organization_id: string;
  name: string;
  /** Leading characters of the key, indexed for lookup; the key itself is never stored. */
  prefix: string;
  /** SHA-256 of the whole key, hex. */
  key_hash: string;
  is_test: number;
  owner_email: string;
  owner_first_name: string;
  owner_last_name: string;
  created_at: number;
  revoked_at: number | null;
  /** JSON array of scopes (auth/scopes.ts), migrations/0025_key_controls.ts. */
  scopes: string;
  /** JSON array of model names, `prefix*` patterns and `provider/*`; [] allows every model. */
  allowed_models: string;
  expires_at: number | null;
  /** JSON object: {requests_per_minute?, tokens_per_minute?}. */
  rate_limits: string;
  last_used_at: number | null;
  /** The secret a rotation replaced, valid until previous_valid_until (its grace period). */
  previous_prefix: string | null;
  previous_key_hash: string | null;
  previous_valid_until: number | null;
}

/** A named upstream an organization registered (migrations/0013_providers.ts, 0024_provider_options.ts). */
export interface ProvidersTable {
  organization_id: string;
  name: string;
  kind: string;
  base_url: string | null;
  /** JSON array of model names and `prefix*` patterns. */
  models: string | null;
  /** JSON object: the settings of its kind's own (migrations/0024_provider_options.ts), {} for none. */
  options: string;
  created_at: number;
  updated_at: number;
}

/** One of a provider's keys. */
export interface ProviderKeysTable {
  organization_id: string;
  provider: string;
  key_id: string;
  /** AES-256-GCM envelope, see auth/secret-box.ts. */
  api_key_encrypted: string;
  api_key_preview: string;
  weight: number;
  created_at: number;
  updated_at: number;
}

/** One request log. JSON-valued columns hold JSON text; see migrations/0002_logs.ts. */
export interface LogsTable {
  id: Generated<number>;
  unique_id: string;
  organization_id: string;
  api_key_id: string | null;
  organization_key_name: string;
  user_email: string;
  is_test: number;
  environment: string;
  log_type: string;
  log_method: string;
  status_code: number;
  status: string;
  failed: number;
  error_message: string | null;
  /** Why the call failed, as a code (docs/api.md "The log record"); null when it did not, or none was given. */
  error_code: string | null;
  input: string | null;
  output: string | null;
  /** The input and output as one short line each (src/logs/preview.ts); null for logs stored before. */
  input_preview: string | null;
  output_preview: string | null;
  prompt_messages: string | null;
  completion_message: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  total_request_tokens: number;
  cost: number;
  /** 1: no price was known for the model, and `cost` (0) is not its cost (the API shows null). */
  unpriced: number;
  /** JSON text: the tries before the one that answered ([{provider, model, status_code, error, latency}]). */
  attempts: string | null;
  /** 1: a fallback model answered. */
  fallback_used: number;
  /** 1: answered from the response cache. */
  cache_hit: number;
  latency: number;
  time_to_first_token: number | null;
  tokens_per_second: number;
  routing_time: number;
  model: string;
  foundation_model: string;
  provider_id: string;
  deployment_name: string | null;
  customer_identifier: string;
  customer_email: string;
  thread_identifier: string | null;
  custom_identifier: string | null;
  trace_unique_id: string | null;
  span_unique_id: string | null;
  span_parent_id: string | null;
  span_name: string | null;
  span_workflow_name: string | null;
  prompt_id: string | null;
  temperature: number | null;
  max_tokens: number | null;
  stream: number;
  used_custom_credential: number;
  is_example: number;
  tool_choice: string | null;
  tools: string | null;
  tool_calls: string | null;
  metadata: string;
  embedding_dimensions: number | null;
  embedding_count: number | null;
  audio_duration: number | null;
  transcript: string | null;
  timestamp: number;
  start_time: number | null;
  created_at: number;
}

export interface LogMetadataTable {
  log_id: number;
  organization_id: string;
  key: string;
  value_text: string;
  value_num: number | null;
  /** The log's timestamp, copied so metadata lookups can be bounded by the list's time range. */
  timestamp: number;
  /** The log's environment, copied so a metadata filter alone is counted from this table. */
  is_test: number;
}

/** Facet counts for filter_options (src/logs/facets.ts). */
export interface LogFacetsTable {
  organization_id: string;
  field: string;
  grain_ms: number;
  bucket_start: number;
  is_test: number;
  value_text: string;
  log_count: number;
}

/** What every rollup table holds per row: counts, and per metric field its logs with a value and their sum. */
export interface RollupSumsColumns {
  log_count: number;
  failed_count: number;
  cost_n: number;
  cost_sum: number;
  latency_n: number;
  latency_sum: number;
  time_to_first_token_n: number;
  time_to_first_token_sum: number;
  routing_time_n: number;
  routing_time_sum: number;
  prompt_tokens_n: number;
  prompt_tokens_sum: number;
  completion_tokens_n: number;
  completion_tokens_sum: number;
  total_request_tokens_n: number;
  total_request_tokens_sum: number;
  tokens_per_second_n: number;
  tokens_per_second_sum: number;
}

/** Rollups: sums of the logs per bucket and dimensions (src/logs/rollups/rollup-deltas.ts). */
export interface LogRollupsTable extends RollupSumsColumns {
  organization_id: string;
  grain_ms: number;
  bucket_start: number;
  is_test: number;
  environment: string;
  model: string;
  provider_id: string;
  organization_key_name: string;
  log_type: string;
  status: string;
  status_code: number;
  cache_hit: number;
  latency_bins: string;
  time_to_first_token_bins: string;
}

/** Per organization, hour or day, customer, log type and environment: counts and sums (migration 0034). */
export interface LogCustomerRollupsTable extends RollupSumsColumns {
  organization_id: string;
  grain_ms: number;
  bucket_start: number;
  is_test: number;
  environment: string;
  log_type: string;
  customer_identifier: string;
}

/** Per rollup table (id: its backfillId), the stored logs it does not hold yet (ids next_id to last_id); no row: none. */
export interface RollupBackfillTable {
  id: number;
  next_id: number;
  last_id: number;
}

export interface EvaluatorsTable {
  id: string;
  organization_id: string;
  name: string;
  evaluator_slug: string;
  type: string;
  score_value_type: string;
  description: string;
  created_at: number;
  updated_at: number;
}

/** A saved view of the web UI: `query` is its query string, `columns` a JSON array of column ids. */
export interface ViewsTable {
  id: string;
  organization_id: string;
  name: string;
  query: string;
  columns: string;
  created_at: number;
  updated_at: number;
}

/** A single-use link to one export (migration 0012); the token is kept as its SHA-256 only. */
export interface ExportTokensTable {
  token_hash: string;
  organization_id: string;
  /** The key it was made with: a revoked key's tokens no longer work. */
  key_id: string;
  /** The export's query string, its time range resolved when the token was made. */
  query: string;
  /** The export's body filters as JSON text, or null. */
  filters: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export interface ScoresTable {
  id: string;
  organization_id: string;
  log_id: number;
  evaluator_id: string;
  numerical_value: number | null;
  boolean_value: number | null;
  score_value: number;
  created_at: number;
}

/** Logs the database refused (src/logs/write/dead-letters.ts). */
export interface DeadLettersTable {
  id: Generated<number>;
  unique_id: string;
  organization_id: string;
  error: string;
  /** The refused log (its row, metadata and facet source) as JSON text. */
  log: string;
  created_at: number;
}

/** A collection of log copies (src/datasets; migrations/0010_datasets.ts). */
export interface DatasetsTable {
  id: string;
  organization_id: string;
  name: string;
  description: string;
  type: string;
  status: string;
  log_count: number;
  completed_annotation_count: number;
  /** Counts the writes to the dataset's logs (src/datasets/options-cache.ts). */
  revision: number;
  created_at: number;
  updated_at: number;
}

/** A copy of a log in a dataset, or a log written into it by hand (source_log_unique_id null). */
export interface DatasetLogsTable {
  id: Generated<number>;
  dataset_id: string;
  organization_id: string;
  source_log_id: number | null;
  source_log_unique_id: string | null;
  environment: string;
  log_type: string;
  timestamp: number;
  start_time: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_request_tokens: number;
  cost: number;
  /** As the log's. */
  unpriced: number;
  latency: number;
  model: string;
  status_code: number;
  status: string;
  /** The log's error message, copied with it (null for a log added by hand). */
  error_message: string | null;
  /** The log's error code, copied with it (null for a log added by hand). */
  error_code: string | null;
  input: string | null;
  output: string | null;
  metadata: string;
  annotation_status: string;
  /** JSON text {first_name, last_name, email}, or null. */
  annotation_completed_by: string | null;
  created_at: number;
  updated_at: number;
}

export interface DatasetLogMetadataTable {
  log_id: number;
  dataset_id: string;
  organization_id: string;
  key: string;
  value_text: string;
  value_num: number | null;
}

export type DatasetLogScoresTable = Omit<ScoresTable, 'log_id'> & { log_id: number };

/** One stored answer of the response cache (docs/api.md "Response cache"). */
export interface CacheEntriesTable {
  organization_id: string;
  /** SHA-256 (hex) of the canonical request. */
  key: string;
  /** What the body is: a chat completion's JSON, an embedding vector, … */
  kind: string;
  body: string;
  /** Bytes of body, for the cache's bound. */
  size: number;
  created_at: number;
  expires_at: number;
}

/** An organization's bytes in the response cache, counted as entries come and go (src/cache/cache-store.ts). */
export interface CacheUsageTable {
  organization_id: string;
  bytes: number;
}

/** An organization's settings as one JSON object (docs/api.md "Settings"). */
export interface OrganizationSettingsTable {
  organization_id: string;
  settings: string;
  updated_at: number;
}

/**
 * The search index's progress (migrations/0017_search.ts): every log with an id up to `log_id` has its
 * row in `log_search` (a table of each dialect's own shape, queried in src/logs/search/).
 */
export interface SearchWatermarkTable {
  name: string;
  log_id: number;
}

/** Logs the search indexer could not index (migrations/0023_search_set_aside.ts): searched directly. */
export interface SearchSetAsideTable {
  log_id: number;
  /** Why the database refused the log's text. */
  error: string;
  set_aside_at: number;
}

/** A limit on a customer's or the organization's calls (migrations/0026_rate_limits.ts). */
export interface RateLimitsTable {
  id: string;
  organization_id: string;
  applies_to_type: 'customer' | 'organization';
  /** The customer_identifier, or the organization's id. */
  applies_to_value: string;
  requests_per_minute: number | null;
  tokens_per_minute: number | null;
  created_at: number;
  updated_at: number;
}

/**
 * One key's, customer's or organization's share of its limits (src/limits/buckets.ts): the time, epoch ms,
 * at which its requests and its tokens would all be free again.
 */
export interface RateBucketsTable {
  bucket: string;
  requests_at: number;
  tokens_at: number;
}

/** An amount a key, a customer or the organization may spend in a period (migrations/0028_budgets.ts). */
export interface BudgetsTable {
  id: string;
  organization_id: string;
  name: string;
  applies_to_type: 'key' | 'customer' | 'organization';
  /** The key's id, the customer_identifier, or the organization's id. */
  applies_to_value: string;
  amount_usd: number;
  period: 'day' | 'week' | 'month' | 'total';
  /** IANA time zone: where a period's days begin. */
  tz: string;
  /** JSON array of fractions of the amount, ascending. */
  alert_thresholds: string;
  webhook_url: string | null;
  /** The webhook's signing secret, sealed with the server's secret key (auth/secret-box.ts). */
  webhook_secret_encrypted: string | null;
  allow_unpriced: number;
  created_at: number;
  updated_at: number;
}

/** One period of a budget: what its calls spent, and what the calls in flight hold. */
export interface BudgetPeriodsTable {
  budget_id: string;
  /** Epoch ms; 0 for a budget over all time. */
  period_start: number;
  spent_usd: number;
  reserved_usd: number;
}

/** What one call in flight holds of one budget's period, until it ends or expires. */
export interface BudgetReservationsTable {
  id: string;
  budget_id: string;
  period_start: number;
  amount_usd: number;
  expires_at: number;
}

/** A threshold a budget's period crossed: its webhook, delivered once (src/budgets/alerts.ts). */
export interface BudgetAlertsTable {
  budget_id: string;
  period_start: number;
  threshold: number;
  /** The JSON body sent, as signed. */
  body: string;
  created_at: number;
  attempts: number;
  next_attempt_at: number;
  delivered_at: number | null;
  given_up_at: number | null;
}

export interface Database {
  organizations: OrganizationsTable;
  api_keys: ApiKeysTable;
  providers: ProvidersTable;
  provider_keys: ProviderKeysTable;
  logs: LogsTable;
  log_metadata: LogMetadataTable;
  log_facets: LogFacetsTable;
  log_rollups: LogRollupsTable;
  log_customer_rollups: LogCustomerRollupsTable;
  rollup_backfill: RollupBackfillTable;
  evaluators: EvaluatorsTable;
  views: ViewsTable;
  export_tokens: ExportTokensTable;
  scores: ScoresTable;
  dead_letters: DeadLettersTable;
  datasets: DatasetsTable;
  dataset_logs: DatasetLogsTable;
  dataset_log_metadata: DatasetLogMetadataTable;
  dataset_log_scores: DatasetLogScoresTable;
  cache_entries: CacheEntriesTable;
  cache_usage: CacheUsageTable;
  organization_settings: OrganizationSettingsTable;
  search_watermark: SearchWatermarkTable;
  search_set_aside: SearchSetAsideTable;
  rate_limits: RateLimitsTable;
  rate_buckets: RateBucketsTable;
  budgets: BudgetsTable;
  budget_periods: BudgetPeriodsTable;
  budget_reservations: BudgetReservationsTable;
  budget_alerts: BudgetAlertsTable;
}

/** A log row as read back. */
export type StoredLog = Selectable<LogsTable>;
export type LogUpdate = Updateable<LogsTable>;
