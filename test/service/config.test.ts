import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, it } from 'node:test';
import { ConfigError, describeDatabase, loadConfig } from '../../src/config.js';
import { usableCores } from '../../src/util/cores.js';
import { runGatelog } from '../support/cli.js';

const KEY_HEX = crypto.randomBytes(32).toString('hex');
/** A PostgreSQL primary, as far as the settings go (none of these tests connects). */
const PG = { GATELOG_DATABASE_URL: 'postgres://primary/gatelog', GATELOG_SECRET_KEY: KEY_HEX };

describe('configuration', () => {
  it('has the defaults of the contract', () => {
    const config = loadConfig({});
    assert.deepEqual(config.database, { kind: 'sqlite', path: './data/gatelog.db', isDefault: true });
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.port, 8080);
    assert.equal(config.secretKey, null);
    assert.equal(config.openaiBaseUrl, 'https://api.openai.com/v1');
    assert.equal(config.upstreamTimeoutMs, 600000);
    assert.equal(config.publicUrl, null);
    assert.equal(config.logLevel, 'info');
    assert.equal(config.pricingFile, null);
    assert.equal(config.upstreamMaxConnections, null);
    assert.equal(config.workers, usableCores());
    assert.equal(config.workerSlot, null, 'not a cluster worker');
    assert.ok(Object.isFrozen(config));
  });

  it('serves with GATELOG_WORKERS processes, one for an in-memory database', () => {
    assert.equal(loadConfig({ GATELOG_WORKERS: '3' }).workers, 3);
    assert.equal(loadConfig({ GATELOG_DATABASE_URL: ':memory:' }).workers, 1);
    assert.equal(loadConfig({ GATELOG_DATABASE_URL: ':memory:', GATELOG_WORKERS: '1' }).workers, 1);
    // Only the primary of `serve` sets a worker's slot, in the workers it forks.
    assert.equal(loadConfig({ GATELOG_WORKERS: '2', GATELOG_WORKER_SLOT: '2' }).workerSlot, null);
  });

  it('reads every form of GATELOG_DATABASE_URL', () => {
    assert.deepEqual(loadConfig({ GATELOG_DATABASE_URL: 'sqlite:/tmp/x.db' }).database, {
      kind: 'sqlite',
      path: '/tmp/x.db',
      isDefault: false,
    });
    assert.equal(loadConfig({ GATELOG_DATABASE_URL: ':memory:' }).database.kind, 'sqlite');
    const pg = loadConfig({ GATELOG_DATABASE_URL: 'postgres://u@h/db', GATELOG_SECRET_KEY: KEY_HEX });
    assert.deepEqual(pg.database, { kind: 'postgres', url: 'postgres://u@h/db' });
  });

  it('takes GATELOG_DATABASE_READ_URL beside a PostgreSQL GATELOG_DATABASE_URL, naming it without its password', () => {
    const replica = 'postgres://gatelog:hunter2@replica:5433/gatelog';
    const config = loadConfig({ ...PG, GATELOG_DATABASE_READ_URL: ` ${replica} ` });
    assert.deepEqual(config.database, { kind: 'postgres', url: PG.GATELOG_DATABASE_URL, readUrl: replica });
    assert.equal(
      describeDatabase(config.database),
      'PostgreSQL postgres://primary/gatelog (lists read from the replica postgres://gatelog:***@replica:5433/gatelog)',
    );
    // Empty is unset.
    assert.deepEqual(loadConfig({ ...PG, GATELOG_DATABASE_READ_URL: '' }).database, {
      kind: 'postgres',
      url: PG.GATELOG_DATABASE_URL,
    });
  });

  it('stops `gatelog serve` on SQLite with a read replica, in one line naming the setting', async () => {
    const res = await runGatelog(['serve'], {
      GATELOG_DATABASE_URL: ':memory:',
      GATELOG_DATABASE_READ_URL: 'postgres://replica/gatelog',
    });
    assert.equal(res.code, 1);
    assert.equal(
      res.stderr,
      'gatelog: GATELOG_DATABASE_READ_URL: a read replica needs PostgreSQL, but GATELOG_DATABASE_URL is SQLite; unset it\n',
    );
  });

  it('accepts the secret key as hex or base64, and PORT or GATELOG_PORT', () => {
    const b64 = Buffer.from(KEY_HEX, 'hex').toString('base64');
    assert.deepEqual(loadConfig({ GATELOG_SECRET_KEY: b64 }).secretKey, Buffer.from(KEY_HEX, 'hex'));
    assert.equal(loadConfig({ PORT: '9000' }).port, 9000);
    assert.equal(loadConfig({ PORT: '9000', GATELOG_PORT: '9001' }).port, 9001);
    assert.equal(loadConfig({ GATELOG_UPSTREAM_MAX_CONNECTIONS: '64' }).upstreamMaxConnections, 64);
    assert.equal(loadConfig({ GATELOG_UPSTREAM_MAX_CONNECTIONS: '0' }).upstreamMaxConnections, null);
  });

  const bad: [Record<string, string>, string][] = [
    [{ GATELOG_DATABASE_URL: 'mysql://x/y' }, 'GATELOG_DATABASE_URL'],
    [{ GATELOG_DATABASE_URL: 'postgres://u@h/db' }, 'GATELOG_SECRET_KEY'],
    [{ GATELOG_SECRET_KEY: 'too-short' }, 'GATELOG_SECRET_KEY'],
    [{ PORT: 'eighty' }, 'PORT'],
    [{ GATELOG_PORT: '70000' }, 'GATELOG_PORT'],
    [{ GATELOG_OPENAI_BASE_URL: 'not a url' }, 'GATELOG_OPENAI_BASE_URL'],
    [{ GATELOG_UPSTREAM_TIMEOUT_MS: '-5' }, 'GATELOG_UPSTREAM_TIMEOUT_MS'],
    [{ GATELOG_PUBLIC_URL: 'ftp://x' }, 'GATELOG_PUBLIC_URL'],
    [{ GATELOG_LOG_LEVEL: 'loud' }, 'GATELOG_LOG_LEVEL'],
    [{ GATELOG_UPSTREAM_MAX_CONNECTIONS: '-1' }, 'GATELOG_UPSTREAM_MAX_CONNECTIONS'],
    [{ GATELOG_RETENTION_DAYS: '-1' }, 'GATELOG_RETENTION_DAYS'],
    [{ GATELOG_CONTENT_RETENTION_DAYS: 'a week' }, 'GATELOG_CONTENT_RETENTION_DAYS'],
    [{ GATELOG_RETENTION_INTERVAL_S: '0' }, 'GATELOG_RETENTION_INTERVAL_S'],
    [{ GATELOG_WORKERS: '0' }, 'GATELOG_WORKERS'],
    [{ GATELOG_WORKERS: 'all' }, 'GATELOG_WORKERS'],
    [{ GATELOG_DATABASE_URL: ':memory:', GATELOG_WORKERS: '2' }, 'GATELOG_WORKERS'],
    [{ GATELOG_DATABASE_READ_URL: 'postgres://replica/gatelog' }, 'GATELOG_DATABASE_READ_URL'],
    [{ ...PG, GATELOG_DATABASE_READ_URL: 'mysql://replica/gatelog' }, 'GATELOG_DATABASE_READ_URL'],
    [{ ...PG, GATELOG_DATABASE_READ_URL: 'postgres://[bad' }, 'GATELOG_DATABASE_READ_URL'],
  ];
  for (const [env, variable] of bad) {
    it(`refuses a bad ${variable}`, () => {
      assert.throws(
        () => loadConfig(env),
        (err: unknown) => err instanceof ConfigError && err.variable === variable && err.message.startsWith(variable),
      );
    });
  }

  it('stops `gatelog serve` with a message naming the bad variable', async () => {
    const res = await runGatelog(['serve'], { GATELOG_DATABASE_URL: ':memory:', GATELOG_UPSTREAM_TIMEOUT_MS: 'soon' });
    assert.equal(res.code, 1);
    assert.match(res.stderr, /GATELOG_UPSTREAM_TIMEOUT_MS: must be a positive integer/);
  });

  it('takes --workers N in place of GATELOG_WORKERS, and nothing else', async () => {
    const memory = await runGatelog(['serve', '--workers', '2'], { GATELOG_DATABASE_URL: ':memory:' });
    assert.equal(memory.code, 1);
    assert.equal(
      memory.stderr,
      'gatelog: --workers: an in-memory database (:memory:) lives in one process; use 1, or a database file\n',
    );
    const none = await runGatelog(['serve', '--workers=none'], { GATELOG_DATABASE_URL: ':memory:' });
    assert.equal(none.stderr, "gatelog: --workers: must be a positive integer, got 'none'\n");
    const other = await runGatelog(['serve', '--port', '80'], { GATELOG_DATABASE_URL: ':memory:' });
    assert.equal(other.stderr, "gatelog: 'gatelog serve' takes only --workers N, got '--port'\n");
  });
});
