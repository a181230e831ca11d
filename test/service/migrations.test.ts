import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createTestDatabase, testDialect } from '../support/database.js';

describe('migrations', () => {
  it('build the schema from an empty database, and a second run applies nothing', async () => {
    const database = await createTestDatabase();
    const { db } = connect(database.target);
    try {
      const applied = await migrateToLatest(db);
      assert.equal(applied[0], '0001_foundation');
      const tables = (await db.introspection.getTables()).map((t) => t.name);
      for (const table of ['organizations', 'api_keys', 'providers', 'provider_keys'])
        assert.ok(tables.includes(table), table);
      const keyColumns = (await db.introspection.getTables())
        .find((t) => t.name === 'api_keys')!
        .columns.map((c) => c.name);
      assert.ok(keyColumns.includes('key_hash') && keyColumns.includes('prefix'));
      assert.ok(!keyColumns.includes('key'), 'the key itself has no column');
      // Export links: the token's hash, its organization and key, its export, when it expires and was used.
      const tokenColumns = (await db.introspection.getTables())
        .find((t) => t.name === 'export_tokens')!
        .columns.map((c) => c.name)
        .sort();
      assert.deepEqual(tokenColumns, [
        'created_at',
        'expires_at',
        'filters',
        'key_id',
        'organization_id',
        'query',
        'token_hash',
        'used_at',
      ]);
      assert.deepEqual(await migrateToLatest(db), []);
    } finally {
      await db.destroy();
      await database.drop();
    }
  });

  it('leave the database as it was when one fails halfway, and run whole on the next start', async () => {
    const database = await createTestDatabase();
    const { db } = connect(database.target);
    try {
      await migrateToLatest(db, '0002_logs');
      // 0003 builds an index, then adds log_metadata.timestamp: a column already there fails its second step.
      await sql`alter table log_metadata add column timestamp bigint`.execute(db);
      await assert.rejects(migrateToLatest(db, '0003_list_indexes'), /timestamp/);
      const index = async () =>
        (testDialect === 'sqlite'
          ? await sql`select name from sqlite_master where type = 'index' and name = 'logs_scope_idx'`.execute(db)
          : await sql`select indexname from pg_indexes where indexname = 'logs_scope_idx'`.execute(db)
        ).rows.length;
      assert.equal(await index(), 0, 'the index of its first step is not left behind');
      const recorded = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db);
      assert.deepEqual(
        recorded.rows.map((r) => r.name),
        ['0001_foundation', '0002_logs'],
      );
      // What stood in its way gone, the next start runs it, and every migration after it.
      await sql`alter table log_metadata drop column timestamp`.execute(db);
      const applied = await migrateToLatest(db);
      assert.equal(applied[0], '0003_list_indexes');
      assert.equal(await index(), 1);
    } finally {
      await db.destroy();
      await database.drop();
    }
  });
});
