import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { spawnServer, waitForExit } from '../support/cli.js';

describe('gatelog serve on the default SQLite set-up', () => {
  it('generates a 0600 secret key beside the database, serves /health, and exits 0 on SIGTERM', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatelog-serve-'));
    try {
      const { child, baseUrl } = await spawnServer({
        GATELOG_DATABASE_URL: path.join(dir, 'gatelog.db'),
        GATELOG_PORT: '0',
      });
      const keyFile = path.join(dir, 'secret.key');
      assert.equal(fs.statSync(keyFile).mode & 0o777, 0o600);
      assert.equal(Buffer.from(fs.readFileSync(keyFile, 'utf8').trim(), 'base64').length, 32);
      const res = await fetch(`${baseUrl}/health`);
      assert.equal(res.status, 200);
      child.kill('SIGTERM');
      assert.equal(await waitForExit(child), 0);

      // A second start reuses the same key.
      const before = fs.readFileSync(keyFile, 'utf8');
      const again = await spawnServer({ GATELOG_DATABASE_URL: path.join(dir, 'gatelog.db'), GATELOG_PORT: '0' });
      again.child.kill('SIGINT');
      assert.equal(await waitForExit(again.child), 0);
      assert.equal(fs.readFileSync(keyFile, 'utf8'), before);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
