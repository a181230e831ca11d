/**
 * Request-log list benchmark (issue: listing and the filter language). Seeds 1,000,000 logs over
 * 7 days for one organization (kept between runs; or `--rows` over `--days`: bench-store.ts), then times
 * a fixed mix of list calls over real HTTP, 20 times each, over the last hour and over the last 7 days,
 * plus fetch_filters=true.
 *
 *   npm run bench -- list [--db sqlite|postgres] [--rows 1000000] [--days 7] [--runs 20] [--analytics] [--prepare] [--skip-index]
 */
import { parseArgs } from 'node:util';
import { type RawBuilder, sql } from 'kysely';
import { record } from './summary.js';
import { type BenchDb, openBenchStore, percentile } from './bench-store.js';
import { SESSION_STRETCH } from './seed-logs.js';

/** The summary the list bench and the rollup-read bench both time: 5 metrics by model. */
export const FIVE_METRICS_BY_MODEL = {
  metrics: [
    { agg: 'count' },
    { agg: 'error_rate' },
    { field: 'cost', agg: 'sum' },
    { field: 'latency', agg: 'p50' },
    { field: 'latency', agg: 'p95' },
  ],
  group_by: ['model'],
};

export async function runListBench(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      db: { type: 'string', default: 'sqlite' },
      rows: { type: 'string', default: '1000000' },
      runs: { type: 'string', default: '20' },
      // The days the seeded logs span (the ranges timed stay the last hour and the last 7 days).
      days: { type: 'string', default: '7' },
      // Only the analytics and facet rows (skips the list mix).
      analytics: { type: 'boolean', default: false },
      /** Only the queries whose name contains this text. */
      only: { type: 'string' },
      // Only build (or open) the store and print its size: a large build runs apart from the timings.
      prepare: { type: 'boolean', default: false },
      // Serve without filling the search index first (bench-store.ts): search rows then not comparable.
      'skip-index': { type: 'boolean', default: false },
    },
  });
  const rows = Number(values.rows);
  const runs = Number(values.runs);
  const days = Number(values.days);
  // How the recorded rows name the store.
  const stored = days === 7 ? `${rows} logs` : `${rows} logs over ${days} days`;
  const { state, base, handle, close } = await openBenchStore(values.db as BenchDb, rows, {
    days,
    skipIndex: values['skip-index'],
  });
  if (values.prepare) return close();

  const end = new Date(state.now).toISOString();
  const ranges = {
    'last hour': new Date(state.now - 3600_000).toISOString(),
    '7 days': new Date(state.now - 7 * 24 * 3600_000).toISOString(),
  };
  // The rare word searched for: a log's number, in the last 7 days (the 1M store's, kept; a store over
  // more days holds log 123457 before them: one a day before its end).
  const rare = days === 7 ? '123457' : String(rows - Math.ceil(rows / days));
  // The latest session of the seed: its calls are in both ranges.
  const lastSession = `session-${Math.floor((rows - 1) / SESSION_STRETCH)}`;
  // [name, query, body, route]: the list unless a route is given.
  const mix: [string, string, unknown?, string?][] = [
    ['default page', ''],
    // What the explorer asks first: the rows alone, its count asked for apart (ui/src/api-logs.ts).
    ['default page, count=false', '&count=false'],
    ['default page 20', '&page=20'],
    ['sort by -timestamp', '&sort_by=-timestamp'],
    ['sort by id (oldest first)', '&sort_by=id'],
    ['sort by -cost', '&sort_by=-cost'],
    ['model equals', '&model=model-7'],
    [
      'customer_identifier icontains',
      '',
      { filters: { customer_identifier: { operator: 'icontains', value: ['TOMER-12'] } } },
    ],
    ['cost gt', '', { filters: { cost: { operator: 'gt', value: [0.09] } } }],
    ['metadata__plan equals', '&metadata__plan=enterprise'],
    ['status_code not', '&status_code[value]=200&status_code[operator]=not'],
    [
      'three filters combined',
      '&model=model-4',
      { filters: { status_code: { value: [200] }, metadata__region: { value: ['eu-west'] } } },
    ],
    ['fetch_filters=true', '&fetch_filters=true'],
    // A word one log holds ("question 123457"), through the search index.
    ['search, a rare word', `&search=${rare}`],
    ['search, two terms', '', { filters: { search: { value: [`QUESTION ${rare}`] } } }],
    ['search, a rare word and a model', '&model=model-7', { filters: { search: { value: [rare] } } }],
    // The whole range, newest first, as CSV (read in keyset chunks of 500).
    ['export csv, model equals', '&format=csv&model=model-7', undefined, 'export'],
    // The sessions of the range (GET /api/sessions/), latest active first, and one session's calls.
    ['sessions, first page', '', undefined, 'sessions'],
    ["a session's calls, oldest first", `&thread_identifier=${lastSession}&sort_by=timestamp`],
  ];
  const results: string[] = [];
  results.push(`| query | range | p50 ms | p95 ms | count |`, `|---|---|---:|---:|---:|`);
  const chosen = values.analytics ? [] : mix.filter(([name]) => name.includes(values.only ?? ''));
  for (const [name, query, body, route = 'list'] of chosen) {
    for (const [rangeName, start] of Object.entries(ranges)) {
      const path = route === 'sessions' ? '/api/sessions/' : `/api/request-logs/${route}/`;
      const url = `${base}${path}?start_time=${start}&end_time=${end}${query}`;
      const times: number[] = [];
      let count = 0;
      for (let i = 0; i < runs + 1; i++) {
        const t0 = performance.now();
        const res = await fetch(url, {
          method: body ? 'POST' : 'GET',
          headers: { authorization: `Bearer ${state.key}`, 'content-type': 'application/json' },
          body: body ? JSON.stringify(body) : undefined,
        });
        const text = await res.text();
        if (res.status !== 200) throw new Error(`${name}: ${res.status} ${text}`);
        if (i > 0) times.push(performance.now() - t0); // the first call warms caches
        // An export's count is its lines after the CSV header.
        // An answer without its count (count=false) shows its rows.
        const answer = route === 'export' ? null : (JSON.parse(text) as { count: number | null; results?: unknown[] });
        count = answer ? (answer.count ?? answer.results?.length ?? 0) : text.split('\n').length - 2;
      }
      times.sort((a, b) => a - b);
      if (rangeName === '7 days' && name === 'search, a rare word') {
        record('list', values.db!, `search for a rare word, 7 days of ${stored}, p50`, percentile(times, 50), 'ms');
      }
      if (
        rangeName === '7 days' &&
        ['default page', 'default page, count=false', 'fetch_filters=true', 'sessions, first page'].includes(name)
      ) {
        record('list', values.db!, `${name}, 7 days of ${stored}, p95`, percentile(times, 95), 'ms');
      }
      const line = `| ${name} | ${rangeName} | ${percentile(times, 50).toFixed(1)} | ${percentile(times, 95).toFixed(1)} | ${count} |`;
      results.push(line);
      console.log(line);
    }
  }
  // The analytics route and the honoured facet counts, over all 7 days (docs/api.md "Analytics",
  // "Facet counts"): p50 of `runs` calls after one that warms caches.
  const week = { start_time: ranges['7 days'], end_time: end };
  const posts: [string, string, string, unknown][] = [
    ['summary: 5 metrics by model', 'summary', '', { ...week, ...FIVE_METRICS_BY_MODEL }],
    ['facets: model + status_code filters', 'facets', '&model=model-7&status_code=200', undefined],
    [
      'facets: 3 filters incl. metadata',
      'facets',
      '&model=model-4',
      { filters: { status_code: { value: [200] }, metadata__region: { value: ['eu-west'] } } },
    ],
  ];
  for (const [name, route, query, body] of posts) {
    const url =
      route === 'summary'
        ? `${base}/api/request-logs/summary/`
        : `${base}/api/request-logs/${route}/?start_time=${week.start_time}&end_time=${week.end_time}${query}`;
    const times: number[] = [];
    // A summary says what it read (`source`: the rollups or the logs), shown in the count column.
    let source = '-';
    for (let i = 0; i < runs + 1; i++) {
      const t0 = performance.now();
      const res = await fetch(url, {
        method: body ? 'POST' : 'GET',
        headers: { authorization: `Bearer ${state.key}`, 'content-type': 'application/json' },
        body: body ? JSON.stringify(body) : undefined,
      });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`${name}: ${res.status} ${text}`);
      if (i > 0) times.push(performance.now() - t0);
      if (route === 'summary') source = (JSON.parse(text) as { source?: string }).source ?? '-';
    }
    times.sort((a, b) => a - b);
    record(route, values.db!, `${name}, 7 days of ${stored}, p50`, percentile(times, 50), 'ms');
    const line = `| ${name} | 7 days | ${percentile(times, 50).toFixed(1)} | ${percentile(times, 95).toFixed(1)} | ${source} |`;
    results.push(line);
    console.log(line);
  }
  if (values.analytics) {
    // The floor of an exact summary over these 7 days: the database alone (no HTTP, no buckets, no
    // groups) reading the range once, and once more with the two exact latency percentiles — what any
    // summary with p50 and p95 must do at least once per level (totals, buckets, groups).
    const org = await handle.db.selectFrom('api_keys').select('organization_id').limit(1).executeTakeFirstOrThrow();
    for (const [name, floor] of analyticsFloors(values.db as BenchDb, org.organization_id, state.now)) {
      const times: number[] = [];
      for (let i = 0; i < runs + 1; i++) {
        const t0 = performance.now();
        // Several reads: side by side on the read connections (SQLite's reader threads), as the route's.
        if (Array.isArray(floor)) await Promise.all(floor.map((q) => q.execute(handle.reader)));
        else await floor.execute(handle.db);
        if (i > 0) times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      record('summary', values.db!, `floor: ${name}, 7 days of ${stored}, p50`, percentile(times, 50), 'ms');
      const line = `| floor: ${name} | 7 days | ${percentile(times, 50).toFixed(1)} | ${percentile(times, 95).toFixed(1)} | - |`;
      results.push(line);
      console.log(line);
    }
  }
  console.log(`\n${values.db}, ${stored}, ${runs} runs each:\n${results.join('\n')}`);
  await close();
}

/**
 * The database's own time to read 7 days of the organization's logs, with and without two percentiles,
 * to make one of the honoured facet counts' GROUP BYs, and to make the reads they cannot do without.
 */
function analyticsFloors(
  db: BenchDb,
  organizationId: string,
  now: number,
): [string, RawBuilder<unknown> | RawBuilder<unknown>[]][] {
  const where = sql`where organization_id = ${organizationId} and is_test = 0
    and timestamp >= ${now - 7 * 24 * 3600_000} and timestamp <= ${now}`;
  /** p50 and p95 of a column, as each database writes them. */
  const p50p95 = (column: string) =>
    db === 'postgres'
      ? sql`percentile_cont(array[0.5, 0.95]) within group (order by ${sql.ref(column)})`
      : sql`percentile_cont(${sql.ref(column)}, 0.5), percentile_cont(${sql.ref(column)}, 0.95)`;
  const percentiles = p50p95('latency');
  const fourPercentiles = sql`${percentiles}, ${p50p95('time_to_first_token')}`;
  const rangeFour = sql`select count(*), ${fourPercentiles} from logs ${where}`;
  // The facet counts' floor: one of the counts they make, the logs matching every filter counted by one
  // field, as the facet counts read them (the metadata filter's set collected from its side table's
  // index and probed, `+id` on SQLite: facet-counts.ts).
  const regionSet = sql`(select m.log_id from log_metadata m where m.organization_id = ${organizationId}
    and m.key = 'region' and m.timestamp >= ${now - 7 * 24 * 3600_000} and m.timestamp <= ${now}
    and m.value_text = 'eu-west')`;
  const region = sql`${db === 'sqlite' ? sql`+id` : sql`id`} in ${regionSet}`;
  // Where no other filter keeps fewer logs than the set (status_code = 200 keeps 95 %), the set leads:
  // its logs looked up by id.
  const regionLeads = sql`id in ${regionSet}`;
  // The costliest reads each honoured count needs, whatever way it is made: the filtered field
  // counted under the other filters (status_code's leaves most logs, so the logs it leaves out), and
  // the logs matching every filter read with the columns and metadata the other fields are counted
  // from (read, not counted: less than any count of them).
  const leftOut = sql`select model, count(*) from logs ${where} and status_code <> 200 group by model`;
  const bothRead = sql`select sum(length(metadata)), max(provider_id), max(status), max(environment),
    max(log_type), max(customer_identifier) from logs ${where} and model = 'model-7' and status_code = 200`;
  return [
    ['one read of the range (count, sum of cost)', sql`select count(*), sum(cost) from logs ${where}`],
    ['one read with latency p50 and p95', sql`select count(*), ${percentiles} from logs ${where}`],
    // The dashboard's metrics over time hold four percentiles (latency and time to first token, p50 and
    // p95): one level of them, less than its chart needs (a level per bucket and the totals').
    ['one read with latency and TTFT p50 and p95', rangeFour],
    [
      // What the dashboard's metrics over time need at least: those four percentiles for the range and
      // for each 2-hour bucket (84 in 7 days), side by side.
      'the dashboard levels: latency and TTFT p50 and p95 for the range and per bucket, side by side',
      [rangeFour, sql`select timestamp / 7200000, count(*), ${fourPercentiles} from logs ${where} group by 1`],
    ],
    [
      'facets, one field counted under model + status_code',
      sql`select provider_id, count(*) from logs ${where} and model = 'model-7' and status_code = 200 group by provider_id`,
    ],
    [
      'facets, one field counted under the 3 filters',
      sql`select provider_id, count(*) from logs ${where} and model = 'model-4' and status_code = 200 and ${region} group by provider_id`,
    ],
    ['facets, model counted under status_code (the logs it leaves out)', leftOut],
    ['facets, logs under model + status_code read with their metadata', bothRead],
    ['facets, those two reads side by side', [leftOut, bothRead]],
    [
      'facets, model counted under status_code + metadata',
      sql`select model, count(*) from logs ${where} and status_code = 200 and ${regionLeads} group by model`,
    ],
    // The counts the 3-filter row cannot do without, each in the form it takes there, side by side: the
    // models under the other two (the set leads), the statuses under model + metadata (the model's
    // logs lead, the set probed), and the model's logs under status_code read with their metadata
    // (the regions and the unfiltered fields are counted from those).
    [
      'facets, the 3 filters: the counts they need, side by side',
      [
        sql`select model, count(*) from logs ${where} and status_code = 200 and ${regionLeads} group by model`,
        sql`select status_code, count(*) from logs ${where} and model = 'model-4' and ${region} group by status_code`,
        sql`select sum(length(metadata)), max(provider_id), max(status), max(environment), max(log_type),
          max(customer_identifier) from logs ${where} and model = 'model-4' and status_code = 200`,
      ],
    ],
  ];
}
