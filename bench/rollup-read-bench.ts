/**
 * The rollup read against the exact read (issue 54): the list benchmark's summary (5 metrics incl. two
 * percentiles, by model, the last 7 days, or `--hours`) asked with `exact: true` (the logs) and `exact: false` (the
 * rollups), in turns on the same served store, after one warming call of each; p50 / p95 of each, and
 * what a summary left to gatelog (`exact` absent) read and took.
 *
 *   npm run bench -- rollup-read [--db sqlite|postgres] [--rows 1000000] [--days 30] [--runs 12] [--bucket auto]
 *     [--hours 168] [--with '{"filters": …}'] (the range's length; fields merged into the summary's body)
 */
import { parseArgs } from 'node:util';
import { openBenchStore, type BenchDb, percentile } from './bench-store.js';
import { FIVE_METRICS_BY_MODEL } from './list-bench.js';

export async function runRollupReadBench(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      db: { type: 'string', default: 'sqlite' },
      rows: { type: 'string', default: '1000000' },
      days: { type: 'string', default: '30' },
      runs: { type: 'string', default: '12' },
      bucket: { type: 'string', default: 'auto' },
      hours: { type: 'string', default: '168' },
      with: { type: 'string', default: '{}' },
    },
  });
  const runs = Number(values.runs);
  const { state, base, close } = await openBenchStore(values.db as BenchDb, Number(values.rows), {
    days: Number(values.days),
    skipIndex: true,
  });
  const body = {
    start_time: new Date(state.now - Number(values.hours) * 3600_000).toISOString(),
    end_time: new Date(state.now).toISOString(),
    bucket: values.bucket,
    ...FIVE_METRICS_BY_MODEL,
    ...(JSON.parse(values.with!) as Record<string, unknown>),
  };
  const ask = async (exact: boolean | undefined) => {
    const t0 = performance.now();
    const res = await fetch(`${base}/api/request-logs/summary/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${state.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(exact === undefined ? body : { ...body, exact }),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`summary: ${res.status} ${text}`);
    const answer = JSON.parse(text) as { source: string; totals: { values: (number | null)[] } };
    return { ms: performance.now() - t0, answer };
  };
  const modes: [string, boolean | undefined][] = [
    ['exact (logs)', true],
    ['rollups', false],
    ['left to gatelog', undefined],
  ];
  const times = new Map<string, number[]>(modes.map(([name]) => [name, []]));
  const sources = new Map<string, string>();
  const totals = new Map<string, (number | null)[]>();
  for (let i = 0; i < runs + 1; i++) {
    for (const [name, exact] of i % 2 === 0 ? modes : [...modes].reverse()) {
      const { ms, answer } = await ask(exact);
      if (i > 0) times.get(name)!.push(ms);
      sources.set(name, answer.source);
      totals.set(name, answer.totals.values);
    }
  }
  console.log(`| read | p50 ms | p95 ms | source | totals |`);
  for (const [name] of modes) {
    const t = times.get(name)!.sort((a, b) => a - b);
    const shown = totals.get(name)!.map((v) => (v === null ? 'null' : Number(v.toPrecision(6))));
    console.log(
      `| ${name} | ${percentile(t, 50).toFixed(1)} | ${percentile(t, 95).toFixed(1)} | ${sources.get(name)} | ${shown.join(', ')} |`,
    );
  }
  await close();
}
