/**
 * A log's `error_code`: the machine-readable reason a call failed (docs/api.md "The log record") — the
 * code of gatelog's own refusal (`model_not_allowed`, `rate_limited`…), the provider's own code, or how a
 * stream ended short — beside its human-readable `error_message`. A dataset log keeps it, copied with
 * its log, as it keeps the message (0022). Null for every log stored before, as for a call that succeeded.
 */
import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('logs').addColumn('error_code', 'text').execute();
  await db.schema.alterTable('dataset_logs').addColumn('error_code', 'text').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('dataset_logs').dropColumn('error_code').execute();
  await db.schema.alterTable('logs').dropColumn('error_code').execute();
}
