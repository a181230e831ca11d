/**
 * PostgreSQL: retention taking a whole month at once (docs/decisions.md "Partitions by month"). A month
 * of `rows` logs three months back (with metadata, search text and rollups), gatelog serving proxied
 * calls at a steady rate while /health is asked every 20 ms; a third of the way in, retention detaches
 * that month (month-retirement.ts, timed here) and then walks its logs to delete their scores, search
 * text and unique_ids. Target: the month gone in < 1 s with /health's p99 unmoved (the same load with
 * nothing dropped is the floor).
 *
 *   npm run bench -- retention --db postgres --partition [--rows 300000] [--seconds 20] [--rate 200]
 */
import { sql } from 'kysely';
import { connect } from '../src/db/connect.js';
import { monthStart } from '../src/db/log-partitions.js';
import { RETIREMENT, retireExpiredMonths } from '../src/retention/month-retirement.js';
import { walkRetiredMonths } from '../src/retention/retired-walk.js';
import { forgetPostgresStore, openBenchStore, percentile } from './bench-store.js';
import { startGatelog } from './gatelog-process.js';
import { rateLoad } from './rate-load.js';
import { record } from './summary.js';

type Target = Parameters<typeof connect>[0];

export interface PartitionDropOptions {
  target: Target;
  org: { id: string };
  secret: string;
  headers: Record<string, string>;
  body: string;
  rows: number;
  seconds: number;
  rate: number;
  /** Seeds `rows` logs between the two instants (the inserter's own path, partitions and all). */
  seed: (from: number, to: number) => Promise<void>;
  pollHealth: (url: string, stop: { done: boolean }) => Promise<number[]>;
}

export async function runPartitionDrop(o: PartitionDropOptions): Promise<void> {
  const month = monthStart(Date.now(), -3);
  const seeding = performance.now();
  await o.seed(month, monthStart(month, 1));
  const handle = connect(o.target);
  // Their search text as the indexer would have written it, so that the walk deletes it too.
  await sql`insert into log_search (log_id, text) select id, lower(coalesce(input, '')) from logs`.execute(handle.db);
  await sql`update search_watermark set log_id = (select max(id) from logs)`.execute(handle.db);
  await sql`analyze`.execute(handle.db);
  console.log(`postgres: ${o.rows} logs of one month seeded in ${((performance.now() - seeding) / 1000).toFixed(0)} s`);

  // Retention off in the served process: the drop is made here, at a known moment, and timed.
  const gatelog = await startGatelog(o.target, { secret: o.secret, env: { GATELOG_RETENTION_DAYS: '0' } });
  const phase = async (drop: boolean) => {
    const stop = { done: false };
    const health = o.pollHealth(gatelog.url, stop);
    let detachMs = 0;
    let walkMs = 0;
    let walked = 0;
    const dropping = drop
      ? (async () => {
          await new Promise((r) => setTimeout(r, (o.seconds * 1000) / 3));
          const started = performance.now();
          const retired = await retireExpiredMonths(
            handle.db,
            [{ organizationId: o.org.id, deleteBefore: Date.now() }],
            Date.now(),
            RETIREMENT,
          );
          detachMs = performance.now() - started;
          if (retired.length !== 1 || retired[0].way !== 'detached') {
            throw new Error(`expected one month detached, got ${JSON.stringify(retired)}`);
          }
          const walkStarted = performance.now();
          for (let done = false; !done;) {
            const r = await walkRetiredMonths(
              handle.db,
              () => true,
              async (within, work) => {
                while (within()) if (await work()) return true;
                return false;
              },
              RETIREMENT,
            );
            walked += r.logs;
            done = r.done;
          }
          walkMs = performance.now() - walkStarted;
        })()
      : Promise.resolve();
    const proxied = await rateLoad(`${gatelog.url}/api/chat/completions`, o.headers, o.body, o.rate, o.seconds);
    await dropping;
    stop.done = true;
    const times = await health;
    return { proxied, healthP99: percentile(times, 99), healthMax: times.at(-1) ?? 0, detachMs, walkMs, walked };
  };
  try {
    await rateLoad(`${gatelog.url}/api/chat/completions`, o.headers, o.body, o.rate, 2);
    const idle = await phase(false);
    const dropped = await phase(true);
    record('retention', 'postgres', 'month detached', dropped.detachMs, 'ms');
    record('retention', 'postgres', '/health p99 while a month is dropped', dropped.healthP99, 'ms');
    console.log(`
a month of ${o.rows.toLocaleString('en')} logs dropped (postgres), ${o.seconds} s of ${o.rate} proxied calls/s:
| run | month detached ms | walk of its logs ms (logs) | /health p99 / max ms | proxied p50 / p99 ms |
|---|---|---|---|---|
| idle | – | – | ${idle.healthP99.toFixed(1)} / ${idle.healthMax.toFixed(1)} | ${idle.proxied.p50.toFixed(2)} / ${idle.proxied.p99.toFixed(2)} |
| dropping | ${dropped.detachMs.toFixed(0)} | ${dropped.walkMs.toFixed(0)} (${dropped.walked}) | ${dropped.healthP99.toFixed(1)} / ${dropped.healthMax.toFixed(1)} | ${dropped.proxied.p50.toFixed(2)} / ${dropped.proxied.p99.toFixed(2)} |
month detached in ${dropped.detachMs.toFixed(0)} ms (target < 1000); /health p99 ${idle.healthP99.toFixed(1)} → ${dropped.healthP99.toFixed(1)} ms`);
  } finally {
    gatelog.child.kill('SIGTERM');
    await new Promise((r) => gatelog.child.once('exit', r));
    await handle.close();
  }
}

/**
 * `retention --db postgres --partition --store ROWS [--days 30]`: the months of the `list` bench's store
 * (10M logs over 30 days: two months, one of nearly all of them) retired at once while /health is asked
 * every 20 ms — the month's size, which a seeded month of 300,000 logs cannot show. No proxied load: the
 * served gatelog would write into the month being detached. The store is deleted after (the `list`
 * benches seed it again); the walk of its logs after the detachment is not run.
 */
export async function runStoreMonthDrop(
  rows: number,
  days: number,
  pollHealth: PartitionDropOptions['pollHealth'],
): Promise<void> {
  const { state, base, handle, close } = await openBenchStore('postgres', rows, { days, skipIndex: true });
  let retired: Awaited<ReturnType<typeof retireExpiredMonths>> = [];
  try {
    const org = await handle.db.selectFrom('organizations').select('id').executeTakeFirstOrThrow();
    const after = monthStart(state.now, 1);
    const phase = async (seconds: number, work: () => Promise<void>) => {
      const stop = { done: false };
      const health = pollHealth(base, stop);
      await Promise.all([work(), new Promise((r) => setTimeout(r, seconds * 1000))]);
      stop.done = true;
      return health;
    };
    const idle = await phase(3, async () => {});
    let detachMs = 0;
    const dropping = await phase(3, async () => {
      await new Promise((r) => setTimeout(r, 1000));
      const started = performance.now();
      retired = await retireExpiredMonths(
        handle.db,
        [{ organizationId: org.id, deleteBefore: after }],
        after,
        RETIREMENT,
      );
      detachMs = performance.now() - started;
    });
    if (retired.length === 0 || retired.some((m) => m.way !== 'detached')) {
      throw new Error(`expected every month detached, got ${JSON.stringify(retired)}`);
    }
    record('retention', 'postgres', `months of a ${rows}-log store detached`, detachMs, 'ms');
    console.log(`
the ${rows.toLocaleString('en')}-log store's ${retired.length} months detached in ${detachMs.toFixed(0)} ms (target < 1000)
/health p99 / max ms: idle ${percentile(idle, 99).toFixed(1)} / ${(idle.at(-1) ?? 0).toFixed(1)}, dropping ${percentile(dropping, 99).toFixed(1)} / ${(dropping.at(-1) ?? 0).toFixed(1)}`);
  } finally {
    await close();
    if (retired.length > 0) await forgetPostgresStore(rows, days);
  }
}
