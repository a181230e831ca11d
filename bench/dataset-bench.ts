/**
 * Dataset benchmark (docs/api.md "Datasets"). On the list benchmark's seeded store (1,000,000 logs over
 * 7 days): creates a dataset from the ~100,000 logs of the newest 16.8 hours, bulk-adds the ~100,000 of
 * the 16.8 hours before, then times the dataset-log list over real HTTP — the default page and every
 * order_by both ways — and filter_options as the first list call after a write computes them.
 *
 *   npm run bench -- datasets [--db sqlite|postgres] [--rows 1000000] [--runs 20]
 */
import { parseArgs } from 'node:util';
import { record } from './summary.js';
import { type BenchDb, openBenchStore, percentile } from './bench-store.js';

const ORDER = ['unique_id', 'timestamp', 'start_time', 'cost', 'latency', 'prompt_tokens', 'completion_tokens'];
ORDER.push('total_request_tokens', 'status_code', 'model', 'annotation_status');

export async function runDatasetBench(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      db: { type: 'string', default: 'sqlite' },
      rows: { type: 'string', default: '1000000' },
      runs: { type: 'string', default: '20' },
    },
  });
  const rows = Number(values.rows);
  const runs = Number(values.runs);
  const { state, base, close } = await openBenchStore(values.db as BenchDb, rows);
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${state.key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (res.status === 204 ? {} : await res.json()) as Record<string, unknown>;
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  // Logs are spread evenly over 7 days: a tenth of them in each 16.8 hours.
  const slice = (7 * 24 * 3600_000 * 100_000) / rows;
  const iso = (ms: number) => new Date(ms).toISOString();
  const results: string[] = [`| step | ms | logs |`, `|---|---:|---:|`];
  const report = (line: string) => {
    results.push(line);
    console.log(line);
  };

  let t0 = performance.now();
  const dataset = await call('POST', '/api/datasets/', {
    name: `bench-${Date.now()}`,
    start_time: iso(state.now - slice),
    end_time: iso(state.now),
  });
  record('datasets', values.db!, `create from a range (${dataset.log_count} logs)`, performance.now() - t0, 'ms');
  report(`| create from a time range | ${(performance.now() - t0).toFixed(0)} | ${dataset.log_count} |`);
  const id = dataset.id as string;
  t0 = performance.now();
  const bulk = await call('POST', `/api/datasets/${id}/logs/bulk/`, {
    start_time: iso(state.now - 2 * slice),
    end_time: iso(state.now - slice - 1),
  });
  report(`| bulk-add a time range | ${(performance.now() - t0).toFixed(0)} | ${bulk.added_count} |`);

  // The first list call after a write computes filter_options; later ones reuse them until the next write.
  const first = (await call('GET', `/api/datasets/${id}/logs/list/`)) as { results: { id: string }[] };
  const options: number[] = [];
  for (let i = 0; i < Math.min(runs, 10); i++) {
    await call('PATCH', `/api/datasets/${id}/logs/${first.results[0].id}/`, { annotation_status: `s${i}` });
    t0 = performance.now();
    await call('GET', `/api/datasets/${id}/logs/list/`);
    options.push(performance.now() - t0);
  }
  options.sort((a, b) => a - b);
  results.push('', `| list call | p50 ms | p95 ms | count |`, `|---|---:|---:|---:|`);
  report(
    `| first after a write (filter_options computed) | ${percentile(options, 50).toFixed(1)} | ${percentile(options, 95).toFixed(1)} | |`,
  );
  for (const order of ['', ...ORDER.flatMap((o) => [o, `-${o}`])]) {
    const times: number[] = [];
    let count = 0;
    for (let i = 0; i < runs + 1; i++) {
      t0 = performance.now();
      const page = await call('GET', `/api/datasets/${id}/logs/list/${order ? `?order_by=${order}` : ''}`);
      if (i > 0) times.push(performance.now() - t0);
      count = page.count as number;
    }
    times.sort((a, b) => a - b);
    report(
      `| ${order ? `order_by=${order}` : 'default page'} | ${percentile(times, 50).toFixed(1)} | ${percentile(times, 95).toFixed(1)} | ${count} |`,
    );
  }
  console.log(`\n${values.db}, ${rows} logs, ${runs} runs each:\n${results.join('\n')}`);
  await call('DELETE', `/api/datasets/${id}/`);
  await close();
}
