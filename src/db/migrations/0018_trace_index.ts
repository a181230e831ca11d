/**
 * An index of the logs that belong to a trace: an OTLP export looks up which of its spans are stored
 * already (a retried export stores nothing twice), and a trace's spans are read together. Partial, so
 * the many logs outside any trace add nothing to it.
 */
import { type Kysely, sql } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('logs_trace_idx')
    .on('logs')
    .columns(['organization_id', 'trace_unique_id', 'span_unique_id'])
    .where(sql.ref('trace_unique_id'), 'is not', null)
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('logs_trace_idx').execute();
}
