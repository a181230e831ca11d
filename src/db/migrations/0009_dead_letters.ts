/**
 * Dead letters: logs the database refused (src/logs/write/dead-letters.ts), kept whole as JSON text with
 * the error, so that nothing acknowledged disappears silently and an operator can see and replay them.
 */
import type { Kysely } from 'kysely';
import { required, serialId } from './columns.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('dead_letters')
    .$call(serialId(db))
    .$call(required({ unique_id: 'text', organization_id: 'text', error: 'text', log: 'text', created_at: 'bigint' }))
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('dead_letters').execute();
}
