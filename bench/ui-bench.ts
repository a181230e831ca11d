/**
 * `npm run bench -- ui [--db sqlite|postgres] [--rows 1000000] [--days 7] [--runs 5]`: the web UI on the
 * seeded store (bench-store.ts; 1M logs over 7 days by default) in headless Chromium, as a user opens it: the time from navigation to the
 * dashboard's six charts drawn with its totals (7 days: the totals' and the top models' summary calls,
 * uPlot's chunk, the drawing; the top customers and keys are asked for at the same time and draw on their
 * own; the time until all three are drawn too), and to the explorer's first row painted (last hour), each page a fresh one with a warm server.
 */
import { parseArgs } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../test/support/chromium.js';
import { openBenchStore, percentile, type BenchDb } from './bench-store.js';
import { record } from './summary.js';

const TOPS = ['Top models', 'Top customers', 'Top keys'];
const CHARTS = ['chart-requests', 'chart-cost', 'chart-tokens', 'chart-latency', 'chart-ttft', 'chart-models'];

/** A fresh page signed in (the key in the tab's session storage, as the sign-in form leaves it). */
async function signedInPage(browser: Browser, base: string, key: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  await page.goto(`${base}/ui/`);
  await page.evaluate(`sessionStorage.setItem('gatelog.apiKey', ${JSON.stringify(key)})`);
  await page.addInitScript({ content: CHARTS_DRAWN_AT });
  return page;
}

/**
 * Run in the page from its navigation: `window.chartsDrawnAt`, the page's time (ms from its navigation's
 * start) when the six charts' canvases and the first tile's value are all there, seen by a mutation
 * observer in the frame they are added. Waiting for them one by one from here (a round trip to the
 * browser each) saw them 150–350 ms late on a busy machine (2026-11-30, PostgreSQL 10M, `--trace`:
 * canvases added at 818 ms, the charts timed at 1,174). `window.topsDrawnAt` likewise, when the three
 * top lists' tables are there as well.
 */
const CHARTS_DRAWN_AT = `window.chartsDrawnAt = null;
window.topsDrawnAt = null;
new MutationObserver((records, observer) => {
  const now = performance.now();
  if (window.chartsDrawnAt === null
    && ${JSON.stringify(CHARTS)}.every((id) => document.querySelector('[data-testid=' + id + '] canvas'))
    && document.querySelector('.tiles .value')) window.chartsDrawnAt = now;
  if (window.chartsDrawnAt !== null
    && ${JSON.stringify(TOPS)}.every((name) => document.querySelector('table[aria-label="' + name + '"]'))) {
    window.topsDrawnAt = now;
    observer.disconnect();
  }
}).observe(document, { childList: true, subtree: true });`;

/**
 * Each request the page sends, as `sent–answered ms  path` from `started` (the bench's clock), and
 * the page's own view (its clock, from its navigation): when each response ended and each canvas was
 * added — what the browser waited for, apart from when the bench saw it.
 */
async function traceCalls(page: Page, started: number): Promise<() => Promise<string[]>> {
  const lines: string[] = [];
  const sent = new Map<object, number>();
  page.on('request', (request) => sent.set(request, performance.now() - started));
  page.on('requestfinished', (request) => {
    const url = new URL(request.url());
    const at = sent.get(request) ?? 0;
    // A summary's call named by what it groups by.
    const groupBy = /"group_by":\["([^"]+)"/.exec(request.postData() ?? '')?.[1];
    const what = groupBy ? ` by ${groupBy}` : '';
    lines.push(`${at.toFixed(0)}–${(performance.now() - started).toFixed(0)} ms  ${url.pathname}${what}`);
  });
  await page.addInitScript({
    content: `window.canvasTimes = []; new MutationObserver((records) => { for (const r of records) for (const n of r.addedNodes) if (n.nodeType === 1 && (n.tagName === 'CANVAS' || n.querySelector('canvas'))) window.canvasTimes.push(Math.round(performance.now())); }).observe(document, { childList: true, subtree: true });`,
  });
  return async () => {
    const inPage = (await page.evaluate(
      `[window.canvasTimes, performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/')).map((e) => Math.round(e.startTime) + '–' + Math.round(e.responseEnd))]`,
    )) as [number[], string[]];
    return [
      ...lines,
      `in the page: API calls ${inPage[1].join(', ')} ms; canvases added at ${inPage[0].join(', ')} ms`,
    ];
  };
}

async function timed(what: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await what();
  return performance.now() - started;
}

export async function runUiBench(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      db: { type: 'string', default: 'sqlite' },
      rows: { type: 'string', default: '1000000' },
      days: { type: 'string', default: '7' },
      runs: { type: 'string', default: '5' },
      // As list's: served without filling the search index first (the dashboard does not search).
      'skip-index': { type: 'boolean', default: false },
      // Each request of the last run's dashboard, when it was sent and answered (ms from the navigation):
      // where the time to the charts goes.
      trace: { type: 'boolean', default: false },
    },
  });
  const rows = Number(values.rows);
  const runs = Number(values.runs);
  const { state, base, close } = await openBenchStore(values.db as BenchDb, rows, {
    days: Number(values.days),
    skipIndex: values['skip-index'],
  });
  const browser = await launchChromium();
  try {
    const to = new Date(state.now).toISOString();
    const from = new Date(state.now - 7 * 86_400_000).toISOString();
    const dashboard = `${base}/ui/?v=dashboard&from=${from}&to=${to}`;
    const explorer = `${base}/ui/?range=1h&at=${to}`;
    const measures: Record<string, number[]> = {
      'dashboard charts, 7 days': [],
      'dashboard top lists too': [],
      'explorer first row, last hour': [],
    };
    // One warm-up of each, not counted: the server's caches and the browser's compile of the chunks.
    for (let run = -1; run < runs; run++) {
      const page = await signedInPage(browser, base, state.key);
      const started = performance.now();
      const calls = values.trace && run === runs - 1 ? await traceCalls(page, started) : null;
      await page.goto(dashboard);
      for (const id of CHARTS) await page.locator(`[data-testid=${id}] canvas`).waitFor({ timeout: 60_000 });
      await page.locator('.tiles .value').first().waitFor();
      const charts = (await page.evaluate('window.chartsDrawnAt')) as number;
      // The top lists draw on their own, after the charts: they are let finish, so that no call of this
      // run is still being answered while the next measure runs.
      for (const name of TOPS) await page.getByRole('table', { name }).waitFor({ timeout: 60_000 });
      const everything = (await page.evaluate('window.topsDrawnAt')) as number;
      if (calls)
        console.log(`the last run's dashboard, charts at ${charts.toFixed(0)} ms:\n${(await calls()).join('\n')}`);
      const firstRow = await timed(async () => {
        await page.goto(explorer);
        await page.getByRole('grid', { name: 'Logs' }).locator('tbody tr').first().waitFor({ timeout: 60_000 });
      });
      await page.close();
      if (run < 0) continue;
      measures['dashboard charts, 7 days'].push(charts);
      measures['dashboard top lists too'].push(everything);
      measures['explorer first row, last hour'].push(firstRow);
    }
    const lines: string[] = [];
    for (const [name, times] of Object.entries(measures)) {
      times.sort((a, b) => a - b);
      record('ui', values.db!, `${name} of ${rows} logs, p50`, percentile(times, 50), 'ms');
      lines.push(`| ${name} | ${percentile(times, 50).toFixed(0)} | ${times[times.length - 1].toFixed(0)} |`);
    }
    console.log(`\n${values.db}, ${rows} logs, ${runs} runs:\n| measure | p50 ms | max ms |\n${lines.join('\n')}`);
  } finally {
    await browser.close();
    await close();
  }
}
