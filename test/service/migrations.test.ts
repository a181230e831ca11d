import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createTestDatabase } from '../support/database.js';

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
});
