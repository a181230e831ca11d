/**
 * A stand-in for a read replica (GATELOG_DATABASE_READ_URL) on the test server: a second database,
 * migrated, holding what the primary's tenant needs to be read there (its organization and key rows).
 * It is not a streaming copy of the primary: what each holds tells which one a read went to.
 */
import pg from 'pg';
import { openDatabase } from '../../src/db/open.js';
import type { DbHandle } from '../../src/db/connect.js';
import { createMonthsAhead } from '../../src/db/log-partitions.js';
import { createTestDatabase, maintenanceUrl, type TestDatabase } from './database.js';
import type { Tenant } from './harness.js';

export interface StandInReplica {
  readonly database: TestDatabase;
  /** A handle of its own on the stand-in, as a second gatelog would have. */
  readonly handle: DbHandle;
  /** Copies the tenant's organization and key from the primary, so that its logs can be written here. */
  copyTenant(primary: DbHandle, tenant: Tenant): Promise<void>;
  /** From now on refuses every connection, its open ones ended: a replica that went down. */
  goDown(): Promise<void>;
  close(): Promise<void>;
}

export async function createStandInReplica(): Promise<StandInReplica> {
  const database = await createTestDatabase();
  const { handle } = await openDatabase(database.target);
  await createMonthsAhead(handle.db);
  return {
    database,
    handle,
    copyTenant: async (primary, tenant) => {
      const org = await primary.db.selectFrom('organizations').selectAll().where('id', '=', tenant.org.id).execute();
      await handle.db.insertInto('organizations').values(org).execute();
      const keys = await primary.db.selectFrom('api_keys').selectAll().where('id', '=', tenant.keyId).execute();
      await handle.db.insertInto('api_keys').values(keys).execute();
    },
    goDown: async () => {
      const name = new URL(database.url).pathname.slice(1);
      const client = new pg.Client({ connectionString: maintenanceUrl });
      await client.connect();
      try {
        await client.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
        await client.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [name]);
      } finally {
        await client.end();
      }
    },
    close: async () => {
      await handle.close();
      await database.drop();
    },
  };
}
