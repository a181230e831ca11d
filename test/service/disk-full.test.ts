/**
 * The disk under a SQLite store fills up while gatelog runs (a small filesystem of its own, filled by
 * another file, as a full disk happens): calls that must write get a 503 saying so and change nothing,
 * proxied calls go on with their logs kept in memory, /health and the service log say what is wrong —
 * and once space returns, everything waiting is written and the file is intact.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { createApiKey } from '../../src/auth/api-keys.js';
import { createOrganization } from '../../src/auth/organizations.js';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { spawnServer, waitForExit } from '../support/cli.js';
import { testDialect } from '../support/database.js';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';
import { api } from '../support/harness.js';

const FS_BYTES = 24 * 1024 * 1024;

/** Mounts a tmpfs of `bytes` at a new directory; null where this process may not mount (not root). */
function mountSmallDisk(bytes: number): string | null {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatelog-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir], { stdio: 'ignore' });
    return dir;
  } catch {
    fs.rmSync(dir, { recursive: true, force: true });
    return null;
  }
}

/** Writes a file until the filesystem refuses (ENOSPC). */
function fillDisk(file: string): void {
  const fd = fs.openSync(file, 'w');
  const block = Buffer.alloc(256 * 1024);
  try {
    for (;;) fs.writeSync(fd, block);
  } catch (err) {
    if ((err as { code?: string }).code !== 'ENOSPC') throw err;
  } finally {
    fs.closeSync(fd);
  }
  // Whatever is smaller than a block is taken too.
  const fd2 = fs.openSync(file, 'a');
  try {
    for (;;) fs.writeSync(fd2, Buffer.alloc(512));
  } catch {
    // full
  } finally {
    fs.closeSync(fd2);
  }
}

const mustRun = process.env.CI === 'true';

describe('the disk of a SQLite store full', { skip: testDialect !== 'sqlite' && 'a SQLite store only' }, () => {
  let dir: string | null;
  let fake: FakeUpstream;
  let server: { child: ChildProcess; baseUrl: string };
  let key: string;
  let dbFile: string;
  const output: string[] = [];

  before(async () => {
    dir = mountSmallDisk(FS_BYTES);
    if (dir === null && mustRun) assert.fail('mounting a small tmpfs failed: this test needs root in CI');
    if (dir === null) return;
    dbFile = path.join(dir, 'gatelog.db');
    const { db } = connect({ kind: 'sqlite', path: dbFile, isDefault: false });
    await migrateToLatest(db);
    const org = await createOrganization(db, 'disk-full-org');
    key = (await createApiKey(db, { organizationId: org.id, name: 'k', isTest: false })).key;
    await db.destroy();
    fake = await startFakeUpstream();
    server = await spawnServer(
      {
        GATELOG_DATABASE_URL: dbFile,
        GATELOG_SECRET_KEY: crypto.randomBytes(32).toString('hex'),
        GATELOG_PORT: '0',
        GATELOG_OPENAI_BASE_URL: fake.baseUrl,
      },
      (text) => output.push(text),
    );
  });
  after(async () => {
    if (dir === null) return;
    server?.child.kill('SIGTERM');
    if (server) await waitForExit(server.child);
    await fake?.close();
    execFileSync('umount', [dir]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 naming the full disk, keeps proxied logs, and writes everything once space returns', async (t) => {
    if (dir === null) return t.skip('mounting a small tmpfs needs root');
    // What the service printed, for a failure's message.
    const said = () => output.join('').slice(-6000);
    const post = (p: string, body: unknown) => api(server.baseUrl, 'POST', p, { key, body });
    assert.equal((await post('/api/provider-keys/', { provider: 'openai', api_key: 'sk-disk' })).status, 201);
    const acknowledged = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const res = await post('/api/request-logs/create/', { model: 'before', output: `before ${i}` });
      assert.equal(res.status, 201, res.text);
      acknowledged.add(res.body.unique_id);
    }

    const filler = path.join(dir, 'filler');
    fillDisk(filler);
    // The file's pages already allocated may take a few more rows: write until the disk says no.
    const big = 'x'.repeat(20_000);
    let refused: Awaited<ReturnType<typeof post>> | null = null;
    for (let i = 0; i < 2000 && refused === null; i++) {
      const res = await post(
        '/api/request-logs/batch/',
        Array.from({ length: 20 }, () => ({ model: 'fill', output: big })),
      );
      if (res.status === 201) for (const id of res.body.unique_ids) acknowledged.add(id);
      else refused = res;
    }
    assert.ok(refused, 'the disk never filled up');
    assert.equal(refused.status, 503, `${refused.text}\n${said()}`);
    assert.equal(refused.body.error.code, 'log_store_unavailable');
    assert.ok(refused.headers.get('retry-after'));

    // Other writes: a clear 503, nothing made.
    const dataset = await post('/api/datasets/', { name: 'on a full disk' });
    assert.equal(dataset.status, 503, `${dataset.text}\n${said()}`);
    assert.equal(dataset.body.error.code, 'database_disk_full');
    assert.match(dataset.body.error.message, /disk is full/);
    assert.ok(dataset.headers.get('retry-after'));

    // Proxied calls go on; their logs wait.
    const proxied: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await post('/api/embeddings', { model: 'text-embedding-3-small', input: `during ${i}` });
      assert.equal(res.status, 200, res.text);
      proxied.push(res.headers.get('x-gatelog-log-id')!);
    }
    const health = await api(server.baseUrl, 'GET', '/health');
    assert.equal(health.status, 503, `${health.text}\n${said()}`);
    assert.equal(health.body.log_writer, 'retrying');
    assert.ok(health.body.log_backlog >= 10, JSON.stringify(health.body));
    assert.match(output.join(''), /log store unavailable \(its disk is full\)/);
    assert.match(output.join(''), /The database's disk is full/);

    // Space returns.
    fs.rmSync(filler);
    const deadline = Date.now() + 15_000;
    while ((await api(server.baseUrl, 'GET', '/health')).status !== 200) {
      assert.ok(Date.now() < deadline, `not healthy within 15 s of space returning\n${said()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.match(output.join(''), /log store available again/);
    assert.equal((await post('/api/datasets/', { name: 'after' })).status, 201);
    const after = await post('/api/request-logs/create/', { model: 'after' });
    assert.equal(after.status, 201);
    acknowledged.add(after.body.unique_id);

    server.child.kill('SIGTERM');
    assert.equal(await waitForExit(server.child), 0, said());
    const sqlite = new SQLite(dbFile, { readonly: true });
    try {
      assert.equal(sqlite.pragma('integrity_check', { simple: true }), 'ok');
      const stored = new Set(sqlite.prepare('select unique_id from logs').pluck().all() as string[]);
      const missing = [...acknowledged, ...proxied].filter((id) => !stored.has(id));
      assert.deepEqual(missing, [], `${missing.length} logs lost`);
      assert.equal(stored.size, acknowledged.size + proxied.length, 'and nothing stored twice or half-done');
      const datasets = sqlite.prepare('select name from datasets').pluck().all();
      assert.deepEqual(datasets, ['after']);
    } finally {
      sqlite.close();
    }
  });
});
