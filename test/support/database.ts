/**
 * A fresh database per test file: a SQLite file in a temporary folder, or a new PostgreSQL database
 * created over a maintenance connection (GATELOG_TEST_DB=postgres).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { DatabaseTarget } from '../../src/config.js';

export type TestDialect = 'sqlite' | 'postgres';

export const testDialect: TestDialect = process.env.GATELOG_TEST_DB === 'postgres' ? 'postgres' : 'sqlite';

export const maintenanceUrl = process.env.GATELOG_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  readonly target: DatabaseTarget;
  /** The URL (postgres) or file path (sqlite) as GATELOG_DATABASE_URL would hold it. */
  readonly url: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const id = `${process.pid}_${crypto.randomBytes(4).toString('hex')}`;
  if (testDialect === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatelog-test-'));
    const file = path.join(dir, 'gatelog.db');
    return {
      target: { kind: 'sqlite', path: file, isDefault: false },
      url: file,
      drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
    };
  }
  const name = `gatelog_test_${id}`;
  await withMaintenance((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(maintenanceUrl);
  url.pathname = `/${name}`;
  return {
    target: { kind: 'postgres', url: url.toString() },
    url: url.toString(),
    drop: () => withMaintenance((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {}),
  };
}

/**
 * A fresh PostgreSQL database owned by a fresh role that is not a superuser, its URL logging in as that
 * role: a gatelog on it can cancel only its own statements (pg_cancel_backend), not a superuser's.
 */
export async function createRoleOwnedTestDatabase(): Promise<TestDatabase> {
  const id = `${process.pid}_${crypto.randomBytes(4).toString('hex')}`;
  const name = `gatelog_test_${id}`;
  const role = `gatelog_test_role_${id}`;
  await withMaintenance(async (c) => {
    await c.query(`CREATE ROLE ${role} LOGIN NOSUPERUSER`);
    await c.query(`CREATE DATABASE ${name} OWNER ${role}`);
  });
  const url = new URL(maintenanceUrl);
  url.pathname = `/${name}`;
  url.username = role;
  url.password = '';
  return {
    target: { kind: 'postgres', url: url.toString() },
    url: url.toString(),
    drop: () =>
      withMaintenance(async (c) => {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await c.query(`DROP ROLE IF EXISTS ${role}`);
      }),
  };
}

async function withMaintenance<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: maintenanceUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
