/**
 * A time without an offset is UTC everywhere — in a log's timestamp and in a list's range — whatever
 * the server's time zone (`gatelog serve` under TZ=America/New_York, in a child process).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { spawnServer, waitForExit } from '../support/cli.js';
import type { TestDatabase } from '../support/database.js';
import { servedDatabase } from '../support/served-database.js';

describe('times without an offset, on a server outside UTC', () => {
  let database: TestDatabase;
  let key: string;
  let env: Record<string, string>;
  before(async () => {
    ({ database, env, key } = await servedDatabase('tz-org'));
  });
  after(() => database.drop());

  it('are UTC in ingestion and in list ranges alike', async () => {
    const { child, baseUrl } = await spawnServer({ ...env, TZ: 'America/New_York' });
    try {
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      const created = await fetch(`${baseUrl}/api/request-logs/create/`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: 'tz', timestamp: '2024-01-01T00:00:00' }),
      });
      assert.equal(created.status, 201);
      const range = 'start_time=2023-12-31T23:59:00&end_time=2024-01-01T00:01:00';
      const res = await fetch(`${baseUrl}/api/request-logs/list/?${range}`, { headers });
      const body = (await res.json()) as { count: number; results: { timestamp: string }[] };
      assert.equal(body.count, 1);
      assert.equal(body.results[0].timestamp, '2024-01-01T00:00:00.000Z');
    } finally {
      child.kill('SIGTERM');
      await waitForExit(child);
    }
  });
});
