/**
 * The whole-suite summary: each benchmark records its headline figures here as it runs; `npm run bench`
 * with no name then checks the targets (each a ratio or a difference within this one run) and writes
 * one Markdown table, with the machine, the date and the commands, into bench/README.md between the
 * summary markers.
 */
import fs from 'node:fs';
import os from 'node:os';
import * as prettier from 'prettier';

export interface Figure {
  bench: string;
  db: string;
  measure: string;
  value: number;
  unit: string;
}

const figures: Figure[] = [];

/** The measures the targets are checked on, as the benchmarks record them. */
export const MEASURE = {
  floor: 'minimal proxy throughput',
  maxThroughput: 'max throughput',
  throughputOfFloor: 'max throughput ÷ minimal proxy (median of pairs)',
  addedP99At: (rate: number) => `added p99 at ${rate.toLocaleString('en')}/s`,
  heavyListMove: 'p99 moved by heavy lists',
  ingestOfFloor: 'batch of floor',
} as const;

export function record(bench: string, db: string, measure: string, value: number, unit: string): void {
  figures.push({ bench, db, measure, value, unit });
}

function find(bench: string, measure: string, db = '-'): number | undefined {
  return figures.find((f) => f.bench === bench && f.measure === measure && f.db === db)?.value;
}

interface Target {
  what: string;
  value: number | undefined;
  shown: (v: number) => string;
  met: (v: number) => boolean;
  bound: string;
}

function targets(): Target[] {
  const list: Target[] = [
    {
      what: 'proxy throughput ÷ the minimal Node proxy (median of pairs)',
      value: find('proxy', MEASURE.throughputOfFloor),
      shown: (v) => `${v.toFixed(2)}×`,
      met: (v) => v >= 0.5,
      bound: '≥ 0.5×',
    },
    {
      what: 'added p99 at 1,000 calls/s (median of pairs)',
      value: find('proxy', MEASURE.addedP99At(1000)),
      shown: (v) => `${v.toFixed(2)} ms`,
      met: (v) => v <= 2,
      bound: '≤ 2 ms',
    },
    {
      what: 'proxied p99 moved by heavy list calls (median)',
      value: find('proxy', MEASURE.heavyListMove),
      shown: (v) => `${v.toFixed(2)} ms`,
      met: (v) => v <= 5,
      bound: '≤ 5 ms',
    },
  ];
  for (const db of ['sqlite', 'postgres']) {
    const ratio = find('ingest', MEASURE.ingestOfFloor, db);
    if (ratio === undefined) continue;
    list.push({
      what: `durable batch ingestion ÷ its floor, ${db === 'sqlite' ? 'SQLite' : 'PostgreSQL'}`,
      value: ratio,
      shown: (v) => `${(100 * v).toFixed(0)} %`,
      met: (v) => v >= 0.5,
      bound: '≥ 50 %',
    });
  }
  return list;
}

const fmt = (f: Figure) =>
  `${f.value >= 100 ? f.value.toFixed(0) : f.value >= 10 ? f.value.toFixed(1) : f.value.toFixed(2)} ${f.unit}`;

export function summaryMarkdown(commands: string[], started: Date): string {
  const cpus = os.cpus();
  const lines = [
    `Written by \`npm run bench\` on ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC; machine: ` +
      `${cpus.length} × ${cpus[0]?.model ?? 'CPU'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ` +
      `Node.js ${process.version}, ${os.type()} ${os.release()}. Commands, in order: ` +
      commands.map((c) => `\`${c}\``).join(', ') +
      '.',
    '',
    '| target | measured | bound | |',
    '| --- | ---: | ---: | --- |',
    ...targets().map(
      (t) =>
        `| ${t.what} | ${t.value === undefined ? 'not run' : t.shown(t.value)} | ${t.bound} | ` +
        `${t.value === undefined ? '' : t.met(t.value) ? 'met' : 'MISSED'} |`,
    ),
    '',
    '| benchmark | database | measure | value |',
    '| --- | --- | --- | ---: |',
    ...figures.map((f) => `| ${f.bench} | ${f.db} | ${f.measure} | ${fmt(f)} |`),
  ];
  return lines.join('\n');
}

const START = '<!-- bench-summary:start -->';
const END = '<!-- bench-summary:end -->';

/**
 * Replaces the summary between the markers of `readme` (adding them after its title when absent), laid
 * out by Prettier as the rest of the repository is.
 */
export async function writeSummary(readme: string, markdown: string): Promise<void> {
  const text = fs.readFileSync(readme, 'utf8');
  const block = `${START}\n${markdown}\n${END}`;
  const next = text.includes(START)
    ? text.slice(0, text.indexOf(START)) + block + text.slice(text.indexOf(END) + END.length)
    : text.replace(/^(# .*\n)/, `$1\n## The whole suite, one run\n\n${block}\n`);
  const options = (await prettier.resolveConfig(readme)) ?? {};
  fs.writeFileSync(readme, await prettier.format(next, { ...options, filepath: readme }));
}
