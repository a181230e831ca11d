/**
 * Facet counts for filter_options (src/logs/facets.ts): per organization, selection field or metadata
 * key, bucket (hour and day) and environment, how many logs have each value. Filled here from the logs
 * already stored; kept up to date by every write from then on.
 */
import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../dialect.js';
import { organizationId, required } from './columns.js';

// Fixed here rather than imported: a migration must not change when the code it once matched changes.
const FIELDS = ['customer_identifier', 'model', 'provider_id', 'status_code', 'status', 'environment', 'log_type'];
const GRAINS = [3_600_000, 86_400_000];

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  const text = (expr: ReturnType<typeof sql.ref>) => (isPostgres(db) ? sql`${expr}::text` : sql`cast(${expr} as text)`);
  await db.schema
    .createTable('log_facets')
    .$call(organizationId)
    .$call(required({ field: 'text', grain_ms: 'bigint', bucket_start: 'bigint', is_test: 'integer' }))
    .$call(required({ value_text: 'text', log_count: 'bigint' }))
    .addPrimaryKeyConstraint('log_facets_pk', [
      'organization_id',
      'field',
      'grain_ms',
      'bucket_start',
      'is_test',
      'value_text',
    ])
    .execute();
  for (const grain of GRAINS) {
    const bucket = sql`(logs.timestamp / ${sql.lit(grain)}) * ${sql.lit(grain)}`;
    for (const field of FIELDS) {
      const value = text(sql.ref(`logs.${field}`));
      await sql`insert into log_facets (organization_id, field, grain_ms, bucket_start, is_test, value_text, log_count)
        select logs.organization_id, ${sql.lit(field)}, ${sql.lit(grain)}, ${bucket}, logs.is_test, ${value}, count(*)
        from logs group by logs.organization_id, ${bucket}, logs.is_test, ${value}`.execute(db);
    }
    await sql`insert into log_facets (organization_id, field, grain_ms, bucket_start, is_test, value_text, log_count)
      select logs.organization_id, ${sql.lit('metadata__')} || m.key, ${sql.lit(grain)}, ${bucket}, logs.is_test, m.value_text, count(*)
      from log_metadata m join logs on logs.id = m.log_id
      group by logs.organization_id, m.key, ${bucket}, logs.is_test, m.value_text`.execute(db);
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('log_facets').execute();
}
