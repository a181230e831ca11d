/**
 * Saved views (docs/api.md "Saved views"): a named screen of the web UI — its query string (time window,
 * filters, sort) and the columns shown — kept per organization, so that a team shares them.
 */
import type { Kysely } from 'kysely';
import { ownedRecords, required, timestamps } from './columns.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  await ownedRecords(db, 'views')
    .$call(required({ name: 'text', query: 'text', columns: 'text' }))
    .$call(timestamps)
    .addUniqueConstraint('views_org_name_unique', ['organization_id', 'name'])
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('views').execute();
}
