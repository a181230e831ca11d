/**
 * What the SQLite dialects whose queries run on worker threads share (reads: sqlite-read-dialect.ts,
 * bulk writes: sqlite-bulk-dialect.ts): SQLite's own adapter, compiler and introspector around the
 * thread's driver.
 */
import {
  type DatabaseIntrospector,
  type Dialect,
  type Driver,
  type Kysely,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';

export abstract class SqliteThreadDialect implements Dialect {
  abstract createDriver(): Driver;

  createAdapter() {
    return new SqliteAdapter();
  }
  createQueryCompiler() {
    return new SqliteQueryCompiler();
  }
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kysely's signature
  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new SqliteIntrospector(db);
  }
}
