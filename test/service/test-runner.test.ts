/**
 * `npm test`'s runner (scripts/run-tests.mjs): a failing run ends with the list of what failed, per part,
 * rather than leaving the failures hundreds of lines up behind a last part that says "fail 0".
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';

// CommonJS, since a file in the temporary folder has no package.json saying it is a module.
const FILE = (fails: string) => `const { it } = require('node:test');
const assert = require('node:assert/strict');
it('passes', () => assert.ok(true));
it('${fails}', () => assert.equal(1, 2));
`;

// Without NODE_TEST_CONTEXT, which node:test sets for its own children: a `node --test` that sees it
// reports to this run instead of running as npm test's does.
const { NODE_TEST_CONTEXT: _context, ...outside } = process.env;
const runnerEnv = { ...outside, GATELOG_TEST_DB: 'sqlite' };

describe('the test runner', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatelog-runner-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('ends a failing run with the list of failed tests, per part, and exits 1', () => {
    const plain = path.join(dir, 'plain.test.js');
    const timed = path.join(dir, 'slow.timed.test.js');
    fs.writeFileSync(plain, FILE('fails on purpose'));
    fs.writeFileSync(timed, FILE('is too slow on purpose'));
    const run = spawnSync(process.execPath, ['scripts/run-tests.mjs', plain, timed], {
      encoding: 'utf8',
      env: runnerEnv,
      timeout: 120_000,
    });
    assert.equal(run.status, 1, run.stdout + run.stderr);
    const tail = run.stdout.trimEnd().split('\n').slice(-4);
    assert.match(tail[0], /^=== FAILED in \d+ min \d+ s ===$/);
    assert.equal(tail[1], '2 failed:');
    assert.equal(tail[2], `  ✖ [sqlite] ${path.relative('.', plain)} › fails on purpose`);
    assert.equal(tail[3], `  ✖ [sqlite, timed] ${path.relative('.', timed)} › is too slow on purpose`);
  });

  it('ends a passing run with "passed" and exits 0', () => {
    const file = path.join(dir, 'fine.test.js');
    fs.writeFileSync(file, `require('node:test').it('passes', () => {});\n`);
    const run = spawnSync(process.execPath, ['scripts/run-tests.mjs', file], {
      encoding: 'utf8',
      env: runnerEnv,
      timeout: 120_000,
    });
    assert.equal(run.status, 0, run.stdout + run.stderr);
    assert.match(run.stdout.trimEnd().split('\n').at(-1) ?? '', /^=== passed in \d+ min \d+ s ===$/);
  });

  it('runs a folder given as an argument, its pure tests once and the others once per database', () => {
    const area = path.join(dir, 'area');
    const marks = path.join(dir, 'marks.txt');
    fs.mkdirSync(area);
    const marking = (name: string) =>
      `require('node:test').it('${name}', () => require('node:fs').appendFileSync(${JSON.stringify(marks)}, '${name} ' + process.env.GATELOG_TEST_DB + '\\n'));\n`;
    fs.writeFileSync(path.join(area, 'calc.pure.test.js'), marking('pure'));
    fs.writeFileSync(path.join(area, 'stored.test.js'), marking('stored'));
    const { GATELOG_TEST_DB: _db, CI: _ci, ...everyDatabase } = runnerEnv as NodeJS.ProcessEnv;
    const run = spawnSync(process.execPath, ['scripts/run-tests.mjs', area], {
      encoding: 'utf8',
      env: everyDatabase,
      timeout: 120_000,
    });
    assert.equal(run.status, 0, run.stdout + run.stderr);
    const ran = fs.readFileSync(marks, 'utf8').trim().split('\n').sort();
    // PostgreSQL's part runs where it is reachable (always in CI); the pure file runs with the first part only.
    const parts = [...run.stdout.matchAll(/^=== test suite on (\w+)/gm)].map((m) => m[1]);
    assert.deepEqual(parts[0], 'sqlite');
    assert.deepEqual(ran, ['pure sqlite', ...parts.map((db) => `stored ${db}`)].sort());
  });
});
