/**
 * An index for filters on model, the other most common filter: with the timestamp next and the status
 * code and the id after it, model (and model + status code) filters over a range read only the matching
 * index entries, on PostgreSQL too (whose indexes do not hold the row id unless told).
 */
import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('logs_model_idx')
    .on('logs')
    .columns(['organization_id', 'is_test', 'model', 'timestamp', 'status_code', 'id'])
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('logs_model_idx').execute();
}
