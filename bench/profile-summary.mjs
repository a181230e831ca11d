// Summarizes a .cpuprofile: self time per function, top 25. Usage: node bench/profile-summary.mjs FILE
import fs from 'node:fs';

const profile = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const self = new Map();
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const dt = profile.timeDeltas;
const counts = new Map();
profile.samples.forEach((id, i) => counts.set(id, (counts.get(id) ?? 0) + (dt[i] ?? 0)));
for (const [id, us] of counts) {
  const n = byId.get(id);
  const f = n.callFrame;
  const key = `${f.functionName || '(anon)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber}`;
  self.set(key, (self.get(key) ?? 0) + us);
}
const total = [...self.values()].reduce((a, b) => a + b, 0);
for (const [k, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
  console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${k}`);
}
