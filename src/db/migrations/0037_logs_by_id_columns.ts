/**
 * On SQLite, logs_org_id_idx also holds the columns a facet count reads when a metadata value's logs
 * lead (is_test, timestamp, status_code, model; src/logs/list/facet-counts.ts): looked up by id from the
 * side table's set, those logs are then read from the index, not from the wide log rows — one random
 * read of a large file each. A week of 10M logs over 30 days, the models of 145,000 `region = eu-west`
 * logs: 650–1,050 → 250–490 ms a slice (bench/README.md, "10M logs over 30 days on SQLite"). The index
 * stays one, wider; lookups by organization and id read it as before. PostgreSQL's facet counts join
 * the side table another way, so its index is left as it is.
 */
import type { Kysely } from 'kysely';
import { isPostgres } from '../dialect.js';
import { rebuildIndex } from './columns.js';

const BY_ID = ['organization_id', 'id'];
const LED_BY_METADATA = ['is_test', 'timestamp', 'status_code', 'model'];

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) await rebuildIndex(db, 'logs_org_id_idx', 'logs', [...BY_ID, ...LED_BY_METADATA]);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) await rebuildIndex(db, 'logs_org_id_idx', 'logs', BY_ID);
}
