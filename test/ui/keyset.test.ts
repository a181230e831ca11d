/**
 * The explorer's list in Chromium: rows first and the count apart, keyset paging (Next after new logs
 * arrived neither repeats nor skips a log), and virtualised rows (scrolling on loads the next logs by
 * cursor, and only the rows in view are in the DOM).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Page } from 'playwright-core';
import { tickBox, withoutChromium } from '../support/chromium.js';
import { browserSession } from '../support/browser-session.js';
import { pollUntil } from '../support/poll.js';

const TOTAL = 3000;
const ROW_IDS = `[...document.querySelectorAll('table.logs tbody tr[data-log-id]')].map((r) => r.getAttribute('data-log-id'))`;
/** The last row the summary says is loaded ("1–250 of 3000 logs": 250). */
const LOADED = `Number(/–(\\d+) of/.exec(document.querySelector('.summary')?.textContent ?? '')?.[1] ?? 0)`;
const LAST_INDEX = `(() => { const rows = document.querySelectorAll('table.logs tbody tr[data-log-id]'); return Number(rows[rows.length - 1]?.getAttribute('aria-rowindex') ?? 0); })()`;
const FIRST_INDEX = `document.querySelector('table.logs tbody tr[data-log-id]')?.getAttribute('aria-rowindex')`;

describe('explorer paging in Chromium', { skip: withoutChromium }, () => {
  const session = browserSession({
    seed: async (s) => {
      const now = Date.now();
      for (let b = 0; b < TOTAL / 1000; b++) {
        await s.seedLogs(
          Array.from({ length: 1000 }, (_, j) => {
            const i = b * 1000 + j;
            return {
              model: `m-${i % 5}`,
              input: `question ${i}`,
              timestamp: new Date(now - 600_000 + i * 100).toISOString(),
            };
          }),
        );
      }
    },
  });

  // Signed in once the explorer shows: a navigation before that would cut the key's check short.
  const signIn = (page: Page) => session.signIn(page, '', { ready: (p) => p.locator('.summary') });

  const domRows = (page: Page) =>
    page.evaluate<number>(`document.querySelectorAll('table.logs tbody tr[data-log-id]').length`);

  /** Polls `test` until it holds, saying the explorer's summary if it never does. */
  const until = (page: Page, what: string, test: () => Promise<boolean>, ms = 10_000) =>
    pollUntil(test, what, {
      ms,
      detail: async () => `summary: ${String(await page.evaluate(`document.querySelector('.summary')?.textContent`))}`,
    });

  it('shows the rows before the count, which comes apart', async () => {
    const page = await session.page();
    const asked: string[] = [];
    let releaseCount!: () => void;
    const countHeld = new Promise<void>((resolve) => (releaseCount = resolve));
    await page.route('**/api/request-logs/list/**', async (route) => {
      const url = route.request().url();
      asked.push(url);
      if (url.includes('include_fields=unique_id')) await countHeld;
      await route.continue();
    });
    await signIn(page);
    await page.getByText('1–50 of … (counting) logs').waitFor();
    assert.equal(await domRows(page), 50);
    releaseCount();
    await page.getByText(`1–50 of ${TOTAL} logs`).waitFor();
    const rowCalls = asked.filter((u) => u.includes('count=false'));
    assert.ok(rowCalls.length >= 1, asked.join('\n'));
    assert.ok(
      rowCalls.every((u) => !u.includes('fetch_filters')),
      'the rows call leaves the filter options to the count',
    );
    await page.close();
  });

  it('pages on by cursor: Next after new logs arrived neither repeats nor skips a log', async () => {
    const page = await session.page();
    // Tall enough that the pager is in view: clicking Next then scrolls nothing. (Scrolled down, the
    // explorer loads the next logs below the page and Next goes past them, which is another test's.)
    await page.setViewportSize({ width: 1280, height: 3000 });
    await signIn(page);
    await page.getByText(`1–50 of ${TOTAL} logs`).waitFor();
    const firstPage = await page.evaluate<string[]>(ROW_IDS);
    const before = await session.api('GET', '/api/request-logs/list/?page_size=100&start_time=2000-01-01T00:00:00Z');
    const order = (before.body.results as { unique_id: string }[]).map((r) => r.unique_id);
    assert.deepEqual(firstPage, order.slice(0, 50));
    // Five newer logs: by page number, page 2 would start five logs early (repeating page 1's last five).
    const res = await session.api('POST', '/api/request-logs/batch/', {
      body: Array.from({ length: 5 }, () => ({ model: 'late', timestamp: new Date().toISOString() })),
    });
    assert.equal(res.status, 201);
    await session.t.flush();
    const next = page.getByRole('button', { name: 'Next' });
    const box = await next.boundingBox();
    assert.ok(box && box.y + box.height < 3000, `Next at ${JSON.stringify(box)}: out of view, a click would scroll`);
    await next.click();
    await page.getByText(/^51–100 of/).waitFor();
    const second = await page.evaluate<string[]>(ROW_IDS);
    assert.deepEqual(second, order.slice(50, 100));
    await page.close();
  });

  it('loads more by cursor while scrolling, keeping only the rows in view in the DOM', async () => {
    const page = await session.page();
    const cursorCalls: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('cursor=')) cursorCalls.push(r.url());
    });
    await page.setViewportSize({ width: 1280, height: 800 });
    await signIn(page);
    await page.getByText(/^1–50 of \d+ logs$/).waitFor();
    const loaded = () => page.evaluate<number>(LOADED);
    let most = 0;
    await until(
      page,
      'a thousand rows loaded by scrolling',
      async () => {
        await page.evaluate('window.scrollTo(0, document.documentElement.scrollHeight)');
        most = Math.max(most, await domRows(page));
        return (await loaded()) >= 1050;
      },
      20_000,
    );
    assert.ok(cursorCalls.length >= 4, `${cursorCalls.length} calls by cursor`);
    // A thousand rows and more loaded, a screenful (and its margins) in the DOM.
    assert.ok(most < 160, `${most} rows in the DOM`);
    // At the bottom, the last row in view is the last loaded, at its place in the grid.
    await until(page, 'the last row rendered', async () => {
      await page.evaluate('window.scrollTo(0, document.documentElement.scrollHeight)');
      const index = await page.evaluate<number>(LAST_INDEX);
      return index === (await loaded()) + 1;
    });
    // Back to the top: the first rows are rendered again, the spacer stands for the rest.
    await page.evaluate('window.scrollTo(0, 0)');
    await until(page, 'the first row rendered again', async () => (await page.evaluate(FIRST_INDEX)) === '2');
    assert.ok((await domRows(page)) < 160);
    await page.close();
  });

  it('selects every matching log, past the page, into a new dataset or an export', async () => {
    const page = await session.page();
    await signIn(page);
    const filtered = session.ui(
      `?filters=${encodeURIComponent(JSON.stringify([{ field: 'model', operator: '', values: ['m-1'] }]))}`,
    );
    await page.goto(filtered);
    await page.getByText(/^1–\d+ of 600 logs$/).waitFor();
    assert.equal(await page.getByRole('button', { name: /^Select all/ }).count(), 0);
    await tickBox(page.getByLabel('Select every log of this page'));
    await page.getByText(/^All \d+ logs shown are selected\.$/).waitFor();
    await page.getByRole('button', { name: 'Select all 600 matching logs' }).click();
    await page.getByText('All 600 matching logs are selected.').waitFor();
    await page.getByRole('button', { name: 'Export 600…' }).click();
    await page.getByRole('dialog', { name: 'Export logs' }).getByText('Export 600 logs').waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Add 600 to dataset…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add every matching log to a dataset' });
    await dialog.getByText('600 logs match').waitFor();
    await dialog.getByLabel('Name of the new dataset').fill('all of m-1');
    await dialog.getByRole('button', { name: 'Add 600 to dataset' }).click();
    await page.waitForURL(/[?&]v=dataset/);
    const datasets = await session.api('GET', '/api/datasets/');
    const made = (datasets.body.results as { name: string; log_count: number }[]).find((d) => d.name === 'all of m-1');
    assert.equal(made?.log_count, 600);
    await page.close();
  });

  it('met no script error or policy violation', () => {
    assert.deepEqual(session.problems, []);
  });
});
