/**
 * Request logs, their metadata side table, evaluators and scores.
 *
 * Metadata lives twice: as JSON text on the log (returned as is) and as one row per key in
 * `log_metadata`, indexed by (organization, key, text value) so that `metadata__<key>` filters are index
 * lookups on both dialects for any key (docs/decisions.md).
 */
import type { Kysely } from 'kysely';
import { isPostgres } from '../dialect.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  const pg = isPostgres(db);
  await db.schema
    .createTable('logs')
    .addColumn('id', pg ? 'bigserial' : 'integer', (c) => (pg ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('unique_id', 'text', (c) => c.notNull().unique())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('api_key_id', 'text')
    .addColumn('organization_key_name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('user_email', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('is_test', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('environment', 'text', (c) => c.notNull())
    .addColumn('log_type', 'text', (c) => c.notNull())
    .addColumn('log_method', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('failed', 'integer', (c) => c.notNull())
    .addColumn('error_message', 'text')
    .addColumn('input', 'text')
    .addColumn('output', 'text')
    .addColumn('prompt_messages', 'text')
    .addColumn('completion_message', 'text')
    .addColumn('prompt_tokens', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('completion_tokens', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('total_request_tokens', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('cost', 'double precision', (c) => c.notNull().defaultTo(0))
    .addColumn('latency', 'double precision', (c) => c.notNull().defaultTo(0))
    .addColumn('time_to_first_token', 'double precision')
    .addColumn('tokens_per_second', 'double precision', (c) => c.notNull().defaultTo(0))
    .addColumn('routing_time', 'double precision', (c) => c.notNull().defaultTo(0))
    .addColumn('model', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('foundation_model', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('provider_id', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('deployment_name', 'text')
    .addColumn('customer_identifier', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('customer_email', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('thread_identifier', 'text')
    .addColumn('custom_identifier', 'text')
    .addColumn('trace_unique_id', 'text')
    .addColumn('span_unique_id', 'text')
    .addColumn('span_parent_id', 'text')
    .addColumn('span_name', 'text')
    .addColumn('span_workflow_name', 'text')
    .addColumn('prompt_id', 'text')
    .addColumn('temperature', 'double precision')
    .addColumn('max_tokens', 'integer')
    .addColumn('stream', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('used_custom_credential', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_example', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('tool_choice', 'text')
    .addColumn('tools', 'text')
    .addColumn('tool_calls', 'text')
    .addColumn('metadata', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('embedding_dimensions', 'integer')
    .addColumn('embedding_count', 'integer')
    .addColumn('audio_duration', 'double precision')
    .addColumn('transcript', 'text')
    .addColumn('timestamp', 'bigint', (c) => c.notNull())
    .addColumn('start_time', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('logs_org_time_idx').on('logs').columns(['organization_id', 'timestamp', 'id']).execute();
  await db.schema.createIndex('logs_org_id_idx').on('logs').columns(['organization_id', 'id']).execute();

  await db.schema
    .createTable('log_metadata')
    .addColumn('log_id', 'bigint', (c) => c.notNull().references('logs.id').onDelete('cascade'))
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    /** The value's text form: strings as they are, anything else as JSON text (1 → "1", true → "true"). */
    .addColumn('value_text', 'text', (c) => c.notNull())
    /** The value as a number when it is one (a JSON number, or a string that parses as one); else null. */
    .addColumn('value_num', 'double precision')
    .addPrimaryKeyConstraint('log_metadata_pk', ['log_id', 'key'])
    .execute();
  await db.schema
    .createIndex('log_metadata_lookup_idx')
    .on('log_metadata')
    .columns(['organization_id', 'key', 'value_text'])
    .execute();

  await db.schema
    .createTable('evaluators')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('evaluator_slug', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('score_value_type', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('evaluators_org_slug_unique', ['organization_id', 'evaluator_slug'])
    .execute();

  await db.schema
    .createTable('scores')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('log_id', 'bigint', (c) => c.notNull().references('logs.id').onDelete('cascade'))
    .addColumn('evaluator_id', 'text', (c) => c.notNull().references('evaluators.id').onDelete('cascade'))
    .addColumn('numerical_value', 'double precision')
    .addColumn('boolean_value', 'integer')
    .addColumn('score_value', 'double precision', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('scores_log_evaluator_unique', ['log_id', 'evaluator_id'])
    .execute();
  await db.schema
    .createIndex('scores_evaluator_value_idx')
    .on('scores')
    .columns(['evaluator_id', 'score_value', 'log_id'])
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['scores', 'evaluators', 'log_metadata', 'logs']) await db.schema.dropTable(table).execute();
}
