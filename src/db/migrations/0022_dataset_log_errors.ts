/**
 * A dataset log keeps its log's error message (copied with it), so that a dataset of failures reads why
 * each call failed — in its table and its export — without going back to logs retention may delete.
 */
import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('dataset_logs').addColumn('error_message', 'text').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('dataset_logs').dropColumn('error_message').execute();
}
