/**
 * Request logs, their metadata side table, evaluators and scores.
 *
 * Metadata lives twice: as JSON text on the log (returned as is) and as one row per key in
 * `log_metadata`, indexed by (organization, key, text value) so that `metadata__<key>` filters are index
 * lookups on both dialects for any key (docs/decisions.md).
 */
import type { Kysely } from 'kysely';
import {
  createIndex,
  createScores,
  defaulted,
  optional,
  organizationId,
  ownedRecords,
  required,
  serialId,
  timestamps,
} from './columns.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('logs')
    .$call(serialId(db))
    .addColumn('unique_id', 'text', (c) => c.notNull().unique())
    .$call(organizationId)
    .addColumn('api_key_id', 'text')
    .$call(defaulted('text', '', ['organization_key_name', 'user_email']))
    .$call(defaulted('integer', 0, ['is_test']))
    .$call(required({ environment: 'text', log_type: 'text', log_method: 'text', status_code: 'integer' }))
    .$call(required({ status: 'text', failed: 'integer' }))
    .$call(optional('text', ['error_message', 'input', 'output', 'prompt_messages', 'completion_message']))
    .$call(defaulted('integer', 0, ['prompt_tokens', 'completion_tokens', 'total_request_tokens']))
    .$call(defaulted('double precision', 0, ['cost', 'latency']))
    .addColumn('time_to_first_token', 'double precision')
    .$call(defaulted('double precision', 0, ['tokens_per_second', 'routing_time']))
    .$call(defaulted('text', '', ['model', 'foundation_model', 'provider_id']))
    .addColumn('deployment_name', 'text')
    .$call(defaulted('text', '', ['customer_identifier', 'customer_email']))
    .$call(optional('text', ['thread_identifier', 'custom_identifier', 'trace_unique_id', 'span_unique_id']))
    .$call(optional('text', ['span_parent_id', 'span_name', 'span_workflow_name', 'prompt_id']))
    .addColumn('temperature', 'double precision')
    .addColumn('max_tokens', 'integer')
    .$call(defaulted('integer', 0, ['stream', 'used_custom_credential', 'is_example']))
    .$call(optional('text', ['tool_choice', 'tools', 'tool_calls']))
    .$call(defaulted('text', '{}', ['metadata']))
    .$call(optional('integer', ['embedding_dimensions', 'embedding_count']))
    .addColumn('audio_duration', 'double precision')
    .addColumn('transcript', 'text')
    .addColumn('timestamp', 'bigint', (c) => c.notNull())
    .addColumn('start_time', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await createIndex(db, 'logs_org_time_idx', 'logs', ['organization_id', 'timestamp', 'id']);
  await createIndex(db, 'logs_org_id_idx', 'logs', ['organization_id', 'id']);

  await db.schema
    .createTable('log_metadata')
    .addColumn('log_id', 'bigint', (c) => c.notNull().references('logs.id').onDelete('cascade'))
    .$call(required({ organization_id: 'text', key: 'text' }))
    /** The value's text form: strings as they are, anything else as JSON text (1 → "1", true → "true"). */
    .addColumn('value_text', 'text', (c) => c.notNull())
    /** The value as a number when it is one (a JSON number, or a string that parses as one); else null. */
    .addColumn('value_num', 'double precision')
    .addPrimaryKeyConstraint('log_metadata_pk', ['log_id', 'key'])
    .execute();
  await createIndex(db, 'log_metadata_lookup_idx', 'log_metadata', ['organization_id', 'key', 'value_text']);

  await ownedRecords(db, 'evaluators')
    .$call(required({ name: 'text', evaluator_slug: 'text', type: 'text', score_value_type: 'text' }))
    .$call(defaulted('text', '', ['description']))
    .$call(timestamps)
    .addUniqueConstraint('evaluators_org_slug_unique', ['organization_id', 'evaluator_slug'])
    .execute();

  await createScores(db, 'scores', 'logs');
  await createIndex(db, 'scores_evaluator_value_idx', 'scores', ['evaluator_id', 'score_value', 'log_id']);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['scores', 'evaluators', 'log_metadata', 'logs']) await db.schema.dropTable(table).execute();
}
