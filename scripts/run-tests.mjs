#!/usr/bin/env node
// Runs the compiled test suite once per database: SQLite, then PostgreSQL. GATELOG_TEST_DB=sqlite or
// =postgres runs one. PostgreSQL that cannot be reached is skipped with a notice on a developer machine
// and is a failure when CI=true. Arguments choose what runs: an area (`ui`, `test/proxy`), a file
// (`test/ui/pages.test.ts` or its compiled `dist/test/ui/pages.test.js`); none runs everything.
// *.pure.test.js files touch no database: they run once, with the first database's part.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';

const only = process.env.GATELOG_TEST_DB;
const dialects = only ? [only] : ['sqlite', 'postgres'];
const maintenanceUrl = process.env.GATELOG_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const chosen = process.argv.slice(2);

/** The compiled tests below dir whose source still exists (tsc leaves a moved test's old output behind). */
function testFiles(dir) {
  return fs
    .readdirSync(dir, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.test.js'))
    .map((f) => path.join(dir, f))
    .filter((f) => !f.startsWith(path.join('dist', 'test')) || fs.existsSync(sourceOf(f)))
    .sort();
}

function sourceOf(compiled) {
  return path.relative('dist', compiled).replace(/\.js$/, '.ts');
}

/** An argument as compiled test files: `ui`, `test/ui`, `dist/test/ui`, `test/ui/pages.test.ts`, or a .js file. */
function expand(arg) {
  if (arg.endsWith('.js') && fs.existsSync(arg) && fs.statSync(arg).isFile()) return [arg];
  const rel = path
    .normalize(arg)
    .replace(/^dist[\\/]/, '')
    .replace(/^test([\\/]|$)/, '');
  const compiled = path.join('dist', 'test', rel.replace(/\.ts$/, '.js'));
  if (!fs.existsSync(compiled)) {
    if (fs.existsSync(arg) && fs.statSync(arg).isDirectory()) return testFiles(arg);
    console.error(`No test file or area "${arg}" (looked for ${compiled}; is the build current?)`);
    process.exit(2);
  }
  return fs.statSync(compiled).isDirectory() ? testFiles(compiled) : [compiled];
}

async function postgresReachable() {
  const client = new pg.Client({ connectionString: maintenanceUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch (err) {
    console.error(`PostgreSQL at ${maintenanceUrl} is unreachable: ${err.message}`);
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

const files = chosen.length > 0 ? [...new Set(chosen.flatMap(expand))] : testFiles(path.join('dist', 'test'));
let pureRan = false;
let failed = false;
/** What failed, per part ("sqlite", "postgres, timed"), for the list the run ends with. */
const failures = [];
const reportDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatelog-test-report-'));
const startedAt = performance.now();
const minutes = (ms) => `${Math.floor(ms / 60000)} min ${Math.round((ms % 60000) / 1000)} s`;
for (const dialect of dialects) {
  if (dialect === 'postgres' && !(await postgresReachable())) {
    if (process.env.CI === 'true') {
      console.error('CI=true: the PostgreSQL run is required; failing.');
      process.exit(1);
    }
    console.error('Skipping the PostgreSQL run (not reachable; set CI=true to make this a failure).');
    continue;
  }
  // *.timed.test.js files bound latencies (a concurrent /health answers within 200 ms): they run one at
  // a time after the rest, so that what they measure is gatelog, not the other test files on the CPU.
  const timed = files.filter((f) => f.endsWith('.timed.test.js'));
  const untimed = files.filter((f) => !f.endsWith('.timed.test.js') && !(pureRan && f.endsWith('.pure.test.js')));
  pureRan = true;
  console.log(`\n=== test suite on ${dialect} (${untimed.length + timed.length} files) ===`);
  const concurrency = String(Math.max(1, os.availableParallelism()));
  for (const [group, parallel] of [
    [untimed, concurrency],
    [timed, '1'],
  ]) {
    if (group.length === 0) continue;
    const part = parallel === '1' ? `${dialect}, timed` : dialect;
    const failedFile = path.join(reportDir, `${part.replace(/\W+/g, '-')}.txt`);
    const partStarted = performance.now();
    const result = spawnSync(
      process.execPath,
      [
        '--test',
        '--test-reporter=spec',
        '--test-reporter-destination=stdout',
        `--test-reporter=${path.resolve('scripts/failed-tests-reporter.mjs')}`,
        `--test-reporter-destination=${failedFile}`,
        `--test-concurrency=${parallel}`,
        ...group,
      ],
      { stdio: 'inherit', env: { ...process.env, GATELOG_TEST_DB: dialect } },
    );
    console.log(`--- ${part}: ${group.length} files in ${minutes(performance.now() - partStarted)}`);
    if (result.status !== 0) {
      failed = true;
      const lines = fs.existsSync(failedFile) ? fs.readFileSync(failedFile, 'utf8').split('\n').filter(Boolean) : [];
      if (lines.length === 0) lines.push(`(no test failed; the run exited ${result.status ?? result.signal})`);
      for (const line of lines) {
        const [file, name] = line.split('\t');
        failures.push(`[${part}] ${name === undefined ? file : `${path.relative('.', file)} › ${name}`}`);
      }
    }
  }
}
fs.rmSync(reportDir, { recursive: true, force: true });
console.log(`\n=== ${failed ? 'FAILED' : 'passed'} in ${minutes(performance.now() - startedAt)} ===`);
if (failures.length > 0) {
  console.log(`${failures.length} failed:`);
  for (const f of failures) console.log(`  ✖ ${f}`);
}
process.exit(failed ? 1 : 0);
