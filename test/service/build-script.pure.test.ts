/** `npm start` compiles only when a source changed since the last build (scripts/build.mjs --if-stale). */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

describe('the build script', () => {
  // A project of its own, so that the test never rewrites this checkout's dist/.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatelog-build-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, 'src'));
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  fs.writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { module: 'NodeNext', rootDir: '.', outDir: 'dist' }, include: ['src'] }),
  );
  const source = path.join(dir, 'src', 'main.ts');
  const output = path.join(dir, 'dist', 'src', 'main.js');
  const build = (...args: string[]) =>
    execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'build.mjs'), ...args], { cwd: dir });
  const builtTimes = () => fs.statSync(output).mtimeMs;

  it('compiles when there is no build, then not while the build is current, then again after an edit', () => {
    fs.writeFileSync(source, 'export const answer: number = 41;\n');
    build('--if-stale');
    assert.match(fs.readFileSync(output, 'utf8'), /answer = 41/);
    const first = builtTimes();

    build('--if-stale');
    assert.equal(builtTimes(), first, 'a current build is not compiled again');

    fs.writeFileSync(source, 'export const answer: number = 42;\n');
    build('--if-stale');
    assert.match(fs.readFileSync(output, 'utf8'), /answer = 42/);

    // Without --if-stale (npm run build, npm test) it always compiles.
    const second = builtTimes();
    build();
    assert.ok(builtTimes() > second);
  });

  it('fails, and records no build, when the sources do not compile', () => {
    fs.writeFileSync(source, 'export const answer: number = "forty-two";\n');
    assert.throws(() => build('--if-stale'));
    assert.throws(() => build('--if-stale'), 'still stale: compiled (and failed) again');
  });
});
