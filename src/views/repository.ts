/** Saved views of the web UI (docs/api.md "Saved views"), scoped by organization. */
import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../db/dialect.js';
import type { Database, ViewsTable } from '../db/schema.js';
import { conflict, notFound } from '../errors.js';

export interface ViewOut {
  id: string;
  name: string;
  query: string;
  columns: string[];
  created_at: string;
  updated_at: string;
}

export const toView = (row: ViewsTable): ViewOut => ({
  id: row.id,
  name: row.name,
  query: row.query,
  columns: JSON.parse(row.columns) as string[],
  created_at: new Date(row.created_at).toISOString(),
  updated_at: new Date(row.updated_at).toISOString(),
});

const duplicateName = (name: string) => conflict('duplicate_name', `A view named '${name}' already exists.`, 'name');

/** Writes a view; a name the organization already uses is a 409. */
async function saving(name: string, write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicateName(name);
    throw err;
  }
}

export async function requireView(db: Kysely<Database>, organizationId: string, id: string): Promise<ViewsTable> {
  const row = await db
    .selectFrom('views')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) throw notFound('View not found.');
  return row;
}

export const insertView = (db: Kysely<Database>, row: ViewsTable) =>
  saving(row.name, () => db.insertInto('views').values(row).execute());

export const updateView = (db: Kysely<Database>, row: ViewsTable) =>
  saving(row.name, () => db.updateTable('views').set(row).where('id', '=', row.id).execute());

export async function deleteView(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('views').where('id', '=', id).execute();
}

/** One page of an organization's views, by name. */
export async function listViews(db: Kysely<Database>, organizationId: string, limit: number, offset: number) {
  const mine = db.selectFrom('views').where('organization_id', '=', organizationId);
  const { count } = await mine.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
  const rows = await mine.selectAll().orderBy('name').orderBy('id').limit(limit).offset(offset).execute();
  return { count: Number(count), rows };
}
