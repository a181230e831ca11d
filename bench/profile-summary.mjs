// Summarizes a .cpuprofile (node --cpu-prof; GATELOG_BENCH_CPU_PROF=DIR for a bench's gatelog).
//   node bench/profile-summary.mjs FILE [--by self|total|file|caller] [--top N] [--match TEXT] [--skip-ms N]
// self: time in each function itself; total: time in each function and what it called (a function
// counted once per sample, however deep it recurses); file: self time summed per source file (node's
// own internals as "node:…", packages by name). --match keeps only the functions whose name or file
// holds TEXT. caller: for the time spent in functions matching --match (and what they call), the
// nearest gatelog function (src/) above them. --skip-ms leaves out the first N ms (start-up).
// Shares are of the profile's busy time (idle and GC shown apart).
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { fileOf } from './profile-frames.mjs';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    by: { type: 'string', default: 'self' },
    top: { type: 'string', default: '25' },
    match: { type: 'string' },
    'skip-ms': { type: 'string', default: '0' },
  },
});
const profile = JSON.parse(fs.readFileSync(positionals[0], 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const nameOf = (f) => `${f.functionName || '(anon)'} ${fileOf(f.url)}:${f.lineNumber + 1}`;

const sampleTime = new Map();
const skipUs = Number(values['skip-ms']) * 1000;
let clock = 0;
profile.samples.forEach((id, i) => {
  clock += profile.timeDeltas[i] ?? 0;
  if (clock >= skipUs) sampleTime.set(id, (sampleTime.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
const special = new Set(['(idle)', '(program)', '(garbage collector)']);
let busy = 0;
const apart = new Map();
const tally = new Map();
const add = (key, us) => tally.set(key, (tally.get(key) ?? 0) + us);
for (const [id, us] of sampleTime) {
  const frame = byId.get(id).callFrame;
  if (special.has(frame.functionName)) {
    apart.set(frame.functionName, (apart.get(frame.functionName) ?? 0) + us);
    if (frame.functionName !== '(idle)') busy += us;
    continue;
  }
  busy += us;
  if (values.by === 'file') add(fileOf(frame.url), us);
  else if (values.by === 'self') add(nameOf(frame), us);
  else if (values.by === 'caller') {
    let at = id;
    while (at !== undefined && !nameOf(byId.get(at).callFrame).includes(values.match ?? '')) at = parent.get(at);
    if (at === undefined) continue;
    do at = parent.get(at);
    while (at !== undefined && !byId.get(at).callFrame.url.includes('/dist/src/'));
    add(at === undefined ? '(none)' : nameOf(byId.get(at).callFrame), us);
  } else if (values.by === 'total') {
    const seen = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const key = nameOf(byId.get(at).callFrame);
      if (!seen.has(key)) {
        seen.add(key);
        add(key, us);
      }
    }
  }
}
const ms = (us) => (us / 1000).toFixed(0);
console.log(
  `busy ${ms(busy)} ms; ${[...apart].map(([k, us]) => `${k} ${ms(us)} ms`).join(', ')}; shares below are of busy time`,
);
const rows = [...tally]
  .filter(() => values.by !== 'stalls')
  .filter(([k]) => values.by === 'caller' || !values.match || k.includes(values.match))
  .sort((a, b) => b[1] - a[1]);
for (const [k, us] of rows.slice(0, Number(values.top))) {
  console.log(`${((100 * us) / busy).toFixed(1).padStart(5)}%  ${k}`);
}

// --by stalls: the longest stretches of the thread busy without a pause (idle), the event loop held
// meanwhile; each with the gatelog functions (src/) most present in its samples. (A process the machine
// preempts shows a stretch too: read them on a quiet machine.)
if (values.by === 'stalls') {
  const stretches = [];
  let current = null;
  let clockAt = 0;
  profile.samples.forEach((id, i) => {
    clockAt += profile.timeDeltas[i] ?? 0;
    if (clockAt < skipUs) return;
    const idle = byId.get(id).callFrame.functionName === '(idle)';
    if (idle) {
      if (current) stretches.push(current);
      current = null;
      return;
    }
    current ??= { start: clockAt, end: clockAt, frames: new Map() };
    current.end = clockAt;
    const seen = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const f = byId.get(at).callFrame;
      if (!f.url.includes('/dist/src/')) continue;
      const key = nameOf(f);
      if (seen.has(key)) continue;
      seen.add(key);
      current.frames.set(key, (current.frames.get(key) ?? 0) + 1);
    }
  });
  stretches.sort((a, b) => b.end - b.start - (a.end - a.start));
  for (const s of stretches.slice(0, Number(values.top))) {
    const top = [...s.frames]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 4)
      .map(([k]) => k);
    console.log(
      `${((s.end - s.start) / 1000).toFixed(1).padStart(6)} ms at ${(s.start / 1e6).toFixed(1)} s: ${top.join(' < ')}`,
    );
  }
}
