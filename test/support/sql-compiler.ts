/** A Kysely instance that only compiles (no database): for tests of the SQL text itself. */
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import type { Database } from '../../src/db/schema.js';

export function compiler(dialect: 'sqlite' | 'postgres'): Kysely<Database> {
  const pg = dialect === 'postgres';
  return new Kysely<Database>({
    dialect: {
      createAdapter: () => (pg ? new PostgresAdapter() : new SqliteAdapter()),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => (pg ? new PostgresIntrospector(db) : new SqliteIntrospector(db)),
      createQueryCompiler: () => (pg ? new PostgresQueryCompiler() : new SqliteQueryCompiler()),
    },
  });
}
