// Summarizes a .heapprofile (node --heap-prof; GATELOG_BENCH_HEAP_PROF=DIR for a bench's gatelog): the
// bytes allocated (sampled) by each function itself, or per source file, top N.
//   node bench/heap-profile-summary.mjs FILE [--by self|file] [--top N]
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { fileOf } from './profile-frames.mjs';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { by: { type: 'string', default: 'self' }, top: { type: 'string', default: '25' } },
});
const profile = JSON.parse(fs.readFileSync(positionals[0], 'utf8'));

const tally = new Map();
let total = 0;
const stack = [profile.head];
while (stack.length > 0) {
  const node = stack.pop();
  const f = node.callFrame;
  const key =
    values.by === 'file' ? fileOf(f.url) : `${f.functionName || '(anon)'} ${fileOf(f.url)}:${f.lineNumber + 1}`;
  tally.set(key, (tally.get(key) ?? 0) + node.selfSize);
  total += node.selfSize;
  stack.push(...(node.children ?? []));
}
console.log(`sampled allocations ${(total / 1e6).toFixed(1)} MB`);
for (const [k, bytes] of [...tally].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top))) {
  console.log(`${((100 * bytes) / total).toFixed(1).padStart(5)}%  ${(bytes / 1e6).toFixed(1).padStart(7)} MB  ${k}`);
}
