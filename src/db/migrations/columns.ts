/**
 * Column groups and tables that several migrations build. A migration that has run must go on building
 * exactly what it built, so what a piece here builds never changes once a migration calls it: a new
 * shape is a new piece. (Kysely's migrator keeps only the names of the migrations applied, not their
 * source: sharing code changes nothing for a database as long as the SQL stays the same.)
 */
import type { ColumnDataType, CreateTableBuilder, Kysely } from 'kysely';
import { isPostgres } from '../dialect.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
type AnyDb = Kysely<any>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- likewise: the tables are not typed yet
type Table = CreateTableBuilder<any, any>;

/** `organization_id`, deleted with its organization. */
export function organizationId(table: Table): Table {
  return table.addColumn('organization_id', 'text', (c) =>
    c.notNull().references('organizations.id').onDelete('cascade'),
  );
}

/** `created_at` and `updated_at`, epoch milliseconds. */
export function timestamps(table: Table): Table {
  return table
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull());
}

/** An auto-incremented `id` primary key: bigserial on PostgreSQL, SQLite's integer rowid alias. */
export function serialId(db: AnyDb): (table: Table) => Table {
  const pg = isPostgres(db);
  return (table) =>
    table.addColumn('id', pg ? 'bigserial' : 'integer', (c) => (pg ? c.primaryKey() : c.primaryKey().autoIncrement()));
}

/** Columns that are `not null`, in the order given. */
export function required(columns: Record<string, ColumnDataType>): (table: Table) => Table {
  return (table) =>
    Object.entries(columns).reduce((t, [name, type]) => t.addColumn(name, type, (c) => c.notNull()), table);
}

/** Columns that may be null, of one type, in the order given. */
export function optional(type: ColumnDataType, names: string[]): (table: Table) => Table {
  return (table) => names.reduce((t, name) => t.addColumn(name, type), table);
}

/** Columns that are `not null` with the same default, in the order given. */
export function defaulted(type: ColumnDataType, value: string | number, names: string[]): (table: Table) => Table {
  return (table) => names.reduce((t, name) => t.addColumn(name, type, (c) => c.notNull().defaultTo(value)), table);
}

/** A table of an organization's named records: a text `id` primary key and its `organization_id`. */
export function ownedRecords(db: AnyDb, name: string): Table {
  return db.schema
    .createTable(name)
    .addColumn('id', 'text', (c) => c.primaryKey())
    .$call(organizationId);
}

/** The one-key-per-provider table of 0001, which 0013 replaces (and its `down` puts back). */
export async function createProviderCredentials(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('provider_credentials')
    .$call(organizationId)
    .$call(required({ provider: 'text', api_key_encrypted: 'text', api_key_preview: 'text' }))
    .addColumn('base_url', 'text')
    .$call(timestamps)
    .addPrimaryKeyConstraint('provider_credentials_pk', ['organization_id', 'provider'])
    .execute();
}

/** A list's scores (0002 the request logs', 0010 the dataset logs'): one per log and evaluator. */
export async function createScores(db: AnyDb, name: string, logs: string): Promise<void> {
  await db.schema
    .createTable(name)
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('log_id', 'bigint', (c) => c.notNull().references(`${logs}.id`).onDelete('cascade'))
    .addColumn('evaluator_id', 'text', (c) => c.notNull().references('evaluators.id').onDelete('cascade'))
    .addColumn('numerical_value', 'double precision')
    .addColumn('boolean_value', 'integer')
    .addColumn('score_value', 'double precision', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint(`${name}_log_evaluator_unique`, ['log_id', 'evaluator_id'])
    .execute();
}

/** A plain index over columns of one table. */
export async function createIndex(db: AnyDb, name: string, table: string, columns: string[]): Promise<void> {
  await db.schema.createIndex(name).on(table).columns(columns).execute();
}

/**
 * Drops an index and builds it again over other columns (same name, same table). Older versions ran
 * SQLite's migrations outside a transaction, and building an index of a large store takes minutes: a
 * process stopped between the drop and the build left no index and the migration unrecorded, so the next
 * start runs it again — and finds nothing to drop.
 */
export async function rebuildIndex(db: AnyDb, name: string, table: string, columns: string[]): Promise<void> {
  await db.schema.dropIndex(name).ifExists().execute();
  await createIndex(db, name, table, columns);
}
