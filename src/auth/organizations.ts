/** Organizations: the tenant every stored object belongs to. */
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { isUniqueViolation } from '../db/dialect.js';
import { AppError } from '../errors.js';

export interface Organization {
  id: string;
  name: string;
  created_at: string;
}

const toOrganization = (row: { id: string; name: string; created_at: number }): Organization => ({
  id: row.id,
  name: row.name,
  created_at: new Date(row.created_at).toISOString(),
});

export async function createOrganization(db: Kysely<Database>, name: string): Promise<Organization> {
  const trimmed = name.trim();
  if (trimmed === '') throw new AppError(400, 'invalid_value', 'The organization name must not be empty.', 'name');
  const row = { id: crypto.randomUUID(), name: trimmed, created_at: Date.now() };
  try {
    await db.insertInto('organizations').values(row).execute();
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw new AppError(409, 'duplicate_name', `An organization named '${trimmed}' already exists.`, 'name');
    }
    throw err;
  }
  return toOrganization(row);
}

export async function listOrganizations(db: Kysely<Database>): Promise<Organization[]> {
  const rows = await db.selectFrom('organizations').selectAll().orderBy('created_at').orderBy('name').execute();
  return rows.map(toOrganization);
}

/** Finds an organization by id or, failing that, by name. */
export async function findOrganization(db: Kysely<Database>, idOrName: string): Promise<Organization | null> {
  const row = await db
    .selectFrom('organizations')
    .selectAll()
    .where((eb) => eb.or([eb('id', '=', idOrName), eb('name', '=', idOrName)]))
    .orderBy((eb) => eb.case().when('id', '=', idOrName).then(0).else(1).end(), 'asc')
    .executeTakeFirst();
  return row ? toOrganization(row) : null;
}
