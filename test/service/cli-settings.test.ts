/** What the CLI and the server tell a user about their settings, and how they fail to start. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { describeDatabase } from '../../src/config.js';
import { SETTINGS } from '../../src/settings.js';
import { runGatelog, spawnServer, waitForExit, type CliResult } from '../support/cli.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const SECRET = Buffer.alloc(32, 7).toString('base64');

/** Fails unless the command ended with status 1 and one line on stderr that names the setting. */
function failedWithOneLine(res: CliResult, setting: string, cause: RegExp): void {
  assert.equal(res.code, 1, res.stderr);
  const lines = res.stderr.trim().split('\n');
  const last = lines[lines.length - 1];
  assert.match(last, new RegExp(`^gatelog: ${setting}: `));
  assert.match(last, cause);
  assert.doesNotMatch(res.stderr, /\n\s+at /, 'no stack trace');
}

describe('the CLI names its settings and the database it opened', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatelog-cli-settings-'));
  const dbFile = path.join(dir, 'nested', 'gatelog.db');
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('--help lists every environment variable; --version and per-command --help open no database', async () => {
    const env = { GATELOG_DATABASE_URL: dbFile };
    const help = await runGatelog(['--help'], env);
    assert.equal(help.code, 0);
    for (const setting of SETTINGS) assert.ok(help.stdout.includes(setting.name), setting.name);
    assert.match(help.stdout, /same values/);

    const version = await runGatelog(['--version'], env);
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    assert.equal(version.stdout.trim(), pkg.version);

    for (const command of ['serve', 'migrate', 'orgs', 'keys', 'providers']) {
      const res = await runGatelog([command, '--help'], env);
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stdout, new RegExp(`usage: gatelog ${command}`));
    }
    const sub = await runGatelog(['keys', 'create', '--help'], env);
    assert.match(sub.stdout, /--org ORG --name NAME/);
    assert.equal(fs.existsSync(dbFile), false, 'help opened no database');
  });

  it('says on stderr which database each command opened, keeping --json output one object', async () => {
    const env = { GATELOG_DATABASE_URL: dbFile };
    for (const args of [['migrate'], ['orgs', 'list']]) {
      const res = await runGatelog([...args, '--json'], env);
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stderr, `gatelog: database SQLite ${dbFile}\n`);
      JSON.parse(res.stdout);
    }
    const relative = await runGatelog(['orgs', 'list'], { GATELOG_DATABASE_URL: path.relative(ROOT, dbFile) });
    assert.ok(relative.stderr.includes(`SQLite ${dbFile}`), 'a relative path is shown absolute');
  });

  it('hides credentials of a PostgreSQL URL and fails on an unreachable server in one line', async () => {
    const url = 'postgres://gl:hunter2secret@127.0.0.1:1/gatelog?sslpassword=alsosecret';
    assert.equal(
      describeDatabase({ kind: 'postgres', url }),
      'PostgreSQL postgres://gl:***@127.0.0.1:1/gatelog?sslpassword=***',
    );
    const res = await runGatelog(['orgs', 'list'], { GATELOG_DATABASE_URL: url, GATELOG_SECRET_KEY: SECRET });
    assert.doesNotMatch(res.stderr, /hunter2|alsosecret/);
    assert.match(res.stderr, /^gatelog: database PostgreSQL postgres:\/\/gl:\*\*\*@127\.0\.0\.1:1\/gatelog/);
    failedWithOneLine(res, 'GATELOG_DATABASE_URL', /ECONNREFUSED/);
  });
});

describe('gatelog serve: one start-up line, one line when it cannot start', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatelog-serve-start-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('logs the address, the database, the upstream and where the secret key is', async () => {
    const dbFile = path.join(dir, 'a', 'gatelog.db');
    const { child, baseUrl, startLine } = await spawnServer({
      GATELOG_DATABASE_URL: dbFile,
      GATELOG_PORT: '0',
      GATELOG_OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
    });
    try {
      assert.ok(startLine.includes(baseUrl), startLine);
      assert.ok(startLine.includes(`database SQLite ${dbFile}`), startLine);
      assert.ok(startLine.includes('upstream http://127.0.0.1:9/v1'), startLine);
      assert.ok(startLine.includes(`secret key in ${path.join(dir, 'a', 'secret.key')}`), startLine);
    } finally {
      child.kill('SIGTERM');
      await waitForExit(child);
    }
  });

  it('a port in use, a database path that cannot be opened, an unreachable PostgreSQL: exit 1, one line', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = String((blocker.address() as net.AddressInfo).port);
    try {
      const inUse = await runGatelog(['serve'], { GATELOG_DATABASE_URL: path.join(dir, 'b.db'), GATELOG_PORT: port });
      failedWithOneLine(inUse, 'GATELOG_PORT', new RegExp(`127\\.0\\.0\\.1:${port} is already in use`));
    } finally {
      blocker.close();
    }

    const notAFile = path.join(dir, 'a-directory.db');
    fs.mkdirSync(notAFile);
    const cannotOpen = await runGatelog(['serve'], { GATELOG_DATABASE_URL: notAFile, GATELOG_PORT: '0' });
    failedWithOneLine(cannotOpen, 'GATELOG_DATABASE_URL', /cannot open SQLite .*a-directory\.db/);

    const underAFile = path.join(dir, 'plain-file');
    fs.writeFileSync(underAFile, '');
    const underFile = await runGatelog(['serve'], {
      GATELOG_DATABASE_URL: path.join(underAFile, 'x.db'),
      GATELOG_PORT: '0',
    });
    failedWithOneLine(underFile, 'GATELOG_DATABASE_URL', /cannot open SQLite/);

    const unreachable = await runGatelog(['serve'], {
      GATELOG_DATABASE_URL: 'postgres://gl:pw@127.0.0.1:1/gatelog',
      GATELOG_SECRET_KEY: SECRET,
      GATELOG_PORT: '0',
    });
    failedWithOneLine(unreachable, 'GATELOG_DATABASE_URL', /cannot use PostgreSQL .*ECONNREFUSED/);
  });
});

describe('the README', () => {
  it('documents every environment variable and says the CLI reads the same ones as the server', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    for (const setting of SETTINGS) assert.ok(readme.includes(`\`${setting.name}\``), setting.name);
    assert.match(readme, /CLI .*same (environment )?variables/i);
  });
});
