/** Versioned migrations, applied in name order by `gatelog serve` and `gatelog migrate`. */
import { type Kysely, type Migration, Migrator, sql } from 'kysely';
import { isPostgres } from './dialect.js';
import * as m0001 from './migrations/0001_foundation.js';
import * as m0002 from './migrations/0002_logs.js';
import * as m0003 from './migrations/0003_list_indexes.js';
import * as m0004 from './migrations/0004_sort_indexes.js';
import * as m0005 from './migrations/0005_log_facets.js';
import * as m0006 from './migrations/0006_customer_index.js';
import * as m0007 from './migrations/0007_metadata_scope.js';
import * as m0008 from './migrations/0008_model_index.js';
import * as m0009 from './migrations/0009_dead_letters.js';
import * as m0010 from './migrations/0010_datasets.js';
import * as m0011 from './migrations/0011_views.js';
import * as m0012 from './migrations/0012_export_tokens.js';
import * as m0013 from './migrations/0013_providers.js';
import * as m0014 from './migrations/0014_unpriced.js';
import * as m0015 from './migrations/0015_routing.js';
import * as m0016 from './migrations/0016_cache_settings.js';
import * as m0017 from './migrations/0017_search.js';
import * as m0018 from './migrations/0018_trace_index.js';
import * as m0019 from './migrations/0019_dashboard_columns.js';
import * as m0020 from './migrations/0020_cache_byte_accounting.js';
import * as m0021 from './migrations/0021_log_previews.js';
import * as m0022 from './migrations/0022_dataset_log_errors.js';
import * as m0023 from './migrations/0023_search_set_aside.js';
import * as m0024 from './migrations/0024_provider_options.js';
import * as m0025 from './migrations/0025_key_controls.js';
import * as m0026 from './migrations/0026_rate_limits.js';
import * as m0027 from './migrations/0027_log_error_code.js';
import * as m0028 from './migrations/0028_budgets.js';
import * as m0029 from './migrations/0029_key_index.js';
import * as m0030 from './migrations/0030_session_indexes.js';
import * as m0031 from './migrations/0031_log_rollups.js';
import * as m0032 from './migrations/0032_log_partitions.js';
import * as m0033 from './migrations/0033_month_retirements.js';
import * as m0034 from './migrations/0034_customer_rollups.js';
import * as m0035 from './migrations/0035_metadata_statistics.js';
import * as m0036 from './migrations/0036_customer_facets_from_rollups.js';
import * as m0037 from './migrations/0037_logs_by_id_columns.js';
import type { Database } from './schema.js';

const migrations: Record<string, Migration> = {
  '0001_foundation': m0001,
  '0002_logs': m0002,
  '0003_list_indexes': m0003,
  '0004_sort_indexes': m0004,
  '0005_log_facets': m0005,
  '0006_customer_index': m0006,
  '0007_metadata_scope': m0007,
  '0008_model_index': m0008,
  '0009_dead_letters': m0009,
  '0010_datasets': m0010,
  '0011_views': m0011,
  '0012_export_tokens': m0012,
  '0013_providers': m0013,
  '0014_unpriced': m0014,
  '0015_routing': m0015,
  '0016_cache_settings': m0016,
  '0017_search': m0017,
  '0018_trace_index': m0018,
  '0019_dashboard_columns': m0019,
  '0020_cache_byte_accounting': m0020,
  '0021_log_previews': m0021,
  '0022_dataset_log_errors': m0022,
  '0023_search_set_aside': m0023,
  '0024_provider_options': m0024,
  '0025_key_controls': m0025,
  '0026_rate_limits': m0026,
  '0027_log_error_code': m0027,
  '0028_budgets': m0028,
  '0029_key_index': m0029,
  '0030_session_indexes': m0030,
  '0031_log_rollups': m0031,
  '0032_log_partitions': m0032,
  '0033_month_retirements': m0033,
  '0034_customer_rollups': m0034,
  '0035_metadata_statistics': m0035,
  '0036_customer_facets_from_rollups': m0036,
  '0037_logs_by_id_columns': m0037,
};

/**
 * Applies what is missing. On PostgreSQL on one connection without the pool's statement_timeout (a
 * migration may rewrite a large table), and then ANALYZE, so the planner knows the new indexes' tables
 * without waiting for autovacuum; on SQLite `PRAGMA optimize` does the same where it is needed.
 */
export async function migrateToLatest(db: Kysely<Database>, upTo?: string): Promise<string[]> {
  const postgres = isPostgres(db);
  const applied = await db.connection().execute(async (connection) => {
    if (postgres) await sql`set statement_timeout = 0`.execute(connection);
    try {
      const migrator = new Migrator({ db: connection, provider: { getMigrations: async () => migrations } });
      // upTo: a database as an older version left it (the migrations' own tests start from one).
      const { error, results } = await (upTo === undefined ? migrator.migrateToLatest() : migrator.migrateTo(upTo));
      if (error) throw error instanceof Error ? error : new Error(String(error));
      return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
    } finally {
      if (postgres) await sql`reset statement_timeout`.execute(connection);
    }
  });
  if (applied.length > 0) await sql.raw(postgres ? 'analyze' : 'pragma optimize').execute(db);
  return applied;
}
