#!/usr/bin/env node
// Compiles the TypeScript (tsc -p tsconfig.json) into dist/. With --if-stale (what `npm start` runs) it
// compiles only when a source is newer than the last build, so a start with a current build takes no
// compiling. A build records when it began in dist/.build-stamp: a file saved during a build is newer.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const STAMP = path.join('dist', '.build-stamp');
const SOURCES = ['src', 'test', 'bench'];
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
    } else if (stat.mtimeMs > newest && (CONFIGS.includes(file) || /\.(ts|json)$/.test(file))) {
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
const tsc = spawnSync(
  process.execPath,
  [path.join('node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'],
  {
    stdio: 'inherit',
  },
);
if (tsc.status !== 0) process.exit(tsc.status ?? 1);
fs.mkdirSync('dist', { recursive: true });
fs.writeFileSync(STAMP, String(began));
