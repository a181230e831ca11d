#!/usr/bin/env node
// Compiles the TypeScript (tsc -p tsconfig.json) into dist/, then type-checks and builds the web UI
// (ui/, Vite) into dist/web with its scripts and styles precompressed (brotli and gzip). With --if-stale (what `npm start` runs) it
// compiles only when a source is newer than the last build, so a start with a current build takes no
// compiling. A build records when it began in dist/.build-stamp: a file saved during a build is newer.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const STAMP = path.join('dist', '.build-stamp');
const SOURCES = ['src', 'test', 'bench', 'ui'];
const CONFIGS = ['tsconfig.json', 'package.json', 'package-lock.json'];

function newestSource() {
  let newest = 0;
  const visit = (file) => {
    let stat;
    try {
      stat = fs.statSync(file);
    } catch {
      return;
    }
    if (stat.isDirectory()) {
      for (const entry of fs.readdirSync(file)) visit(path.join(file, entry));
    } else if (stat.mtimeMs > newest && (CONFIGS.includes(file) || /\.(ts|tsx|json|css|html|mjs)$/.test(file))) {
      newest = stat.mtimeMs;
    }
  };
  for (const entry of [...SOURCES, ...CONFIGS]) visit(entry);
  return newest;
}

function builtAt() {
  try {
    return Number(fs.readFileSync(STAMP, 'utf8'));
  } catch {
    return 0;
  }
}

if (process.argv.includes('--if-stale') && newestSource() < builtAt()) {
  process.exit(0);
}
const began = Date.now();
// tsc prints nothing while it works: say what the wait is (the first start would otherwise sit silent).
console.error('gatelog: building (TypeScript, then the web UI; about 30-60 s)...');
const tsc = spawnSync(
  process.execPath,
  [path.join('node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'],
  {
    stdio: 'inherit',
  },
);
if (tsc.status !== 0) process.exit(tsc.status ?? 1);
buildUi();
fs.mkdirSync('dist', { recursive: true });
fs.writeFileSync(STAMP, String(began));
console.error(`gatelog: built in ${((Date.now() - began) / 1000).toFixed(0)} s`);

function buildUi() {
  // A tree without the UI's sources (the build script's own test builds one) has only TypeScript to compile.
  if (!fs.existsSync(path.join('ui', 'vite.config.mjs'))) return;
  const run = (args) => {
    const done = spawnSync(process.execPath, args, { stdio: 'inherit' });
    if (done.status !== 0) process.exit(done.status ?? 1);
  };
  run([path.join('node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join('ui', 'tsconfig.json')]);
  run([path.join('node_modules', 'vite', 'bin', 'vite.js'), 'build', '--config', path.join('ui', 'vite.config.mjs')]);
  const assets = path.join('dist', 'web', 'assets');
  for (const name of fs.readdirSync(assets)) {
    if (!/\.(js|css|svg)$/.test(name)) continue;
    const file = path.join(assets, name);
    const bytes = fs.readFileSync(file);
    fs.writeFileSync(`${file}.br`, zlib.brotliCompressSync(bytes));
    fs.writeFileSync(`${file}.gz`, zlib.gzipSync(bytes, { level: 9 }));
  }
}
