/**
 * Each log's input and output as one short line (src/logs/preview.ts), computed when the log is built:
 * a list reads only the first characters of each body, too few to read a long conversation's last
 * message from. Logs stored before have none: their previews are read from the list's rows instead.
 */
import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('logs').addColumn('input_preview', 'text').execute();
  await db.schema.alterTable('logs').addColumn('output_preview', 'text').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('logs').dropColumn('output_preview').execute();
  await db.schema.alterTable('logs').dropColumn('input_preview').execute();
}
