/** Versioned migrations, applied in name order by `gatelog serve` and `gatelog migrate`. */
import { type Kysely, type Migration, Migrator } from 'kysely';
import * as m0001 from './migrations/0001_foundation.js';
import * as m0002 from './migrations/0002_logs.js';
import * as m0003 from './migrations/0003_list_indexes.js';
import * as m0004 from './migrations/0004_sort_indexes.js';
import * as m0005 from './migrations/0005_log_facets.js';
import * as m0006 from './migrations/0006_customer_index.js';
import * as m0007 from './migrations/0007_metadata_scope.js';
import * as m0008 from './migrations/0008_model_index.js';
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
};

export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
