/**
 * A fresh database, migrated, with one organization and key, and the environment a `gatelog serve`
 * child process needs to use it: for tests that run the real server (shutdown, crash, time zone).
 */
import { createApiKey } from '../../src/auth/api-keys.js';
import { createOrganization } from '../../src/auth/organizations.js';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { servedEnv } from './harness.js';

export interface ServedDatabase {
  database: TestDatabase;
  env: Record<string, string>;
  key: string;
}

export async function servedDatabase(orgName: string): Promise<ServedDatabase> {
  const database = await createTestDatabase();
  const env = servedEnv(database);
  const { db } = connect(database.target);
  await migrateToLatest(db);
  const org = await createOrganization(db, orgName);
  const key = (await createApiKey(db, { organizationId: org.id, name: 'k', isTest: false })).key;
  await db.destroy();
  return { database, env, key };
}
