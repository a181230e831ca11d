/**
 * The web UI's log table in Chromium shows logs in time order (docs/decisions.md "Time order"): logs sent
 * through the logging API with past timestamps, out of order, are listed newest first by their
 * timestamp under the default "Time ▼", and oldest first when the Time column is sorted ascending. Its
 * own gatelog and database (startApp), so it disturbs no other UI test.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Page } from 'playwright-core';
import { withoutChromium } from '../support/chromium.js';
import { browserSession, logsGrid, openAndWait } from '../support/browser-session.js';

/** Days back of each log, in the order they are sent: a backfill, not in time order. */
const DAYS_AGO = [2.5, 5, 0.5, 6, 1, 4, 3.5, 0.25, 5.5, 2];

describe('web UI: the log table in time order', { skip: withoutChromium }, () => {
  const session = browserSession({
    seed: async (s) => {
      const now = Date.now();
      await s.seedLogs(
        DAYS_AGO.map((days) => ({
          model: 'backfill',
          // The customer column names each log by its days back, to read the order off the table.
          customer_identifier: `days-${days}`,
          input: 'q',
          output: 'a',
          timestamp: new Date(now - days * 24 * 3600_000).toISOString(),
        })),
      );
    },
  });

  async function signedIn(): Promise<Page> {
    const page = await session.signedIn('', { ready: 'No logs in this time window yet' });
    // The default window (the last hour) holds none of them; the 7-day one holds all.
    await openAndWait(page, session.ui('?range=7d'), `1–${DAYS_AGO.length} of ${DAYS_AGO.length} logs`);
    return page;
  }

  const table = logsGrid;

  /** The rows' customers and times, top to bottom. */
  async function shown(page: Page) {
    const rows = table(page).locator('tbody tr');
    const customers: string[] = [];
    const times: number[] = [];
    for (let i = 0; i < (await rows.count()); i++) {
      const row = rows.nth(i);
      customers.push((await row.getByText(/^days-/).innerText()).trim());
      times.push(Date.parse((await row.locator('time').first().getAttribute('datetime'))!));
    }
    return { customers, times };
  }

  it('lists them newest first by timestamp under the default "Time ▼", oldest first under "Time ▲"', async () => {
    const page = await signedIn();
    const newestFirst = [...DAYS_AGO].sort((x, y) => x - y).map((d) => `days-${d}`);

    const timeHeader = table(page).getByRole('columnheader', { name: /Time/ });
    assert.equal(await timeHeader.getAttribute('aria-sort'), 'descending', 'the default sort is the Time column');
    assert.match(await timeHeader.innerText(), /Time ▼/);
    const first = await shown(page);
    assert.deepEqual(first.customers, newestFirst);
    assert.ok(
      first.times.every((time, i) => i === 0 || time < first.times[i - 1]),
      'each row is older than the one above',
    );

    await timeHeader.getByRole('button').click();
    await table(page).getByRole('columnheader', { name: 'Time ▲' }).waitFor();
    // The rows shown stay until the new page arrives: wait for the oldest at the top.
    await table(page).locator('tbody tr').first().getByText(newestFirst.at(-1)!, { exact: true }).waitFor();
    const ascending = await shown(page);
    assert.deepEqual(ascending.customers, [...newestFirst].reverse());
    await page.close();
    assert.deepEqual(session.problems, []);
  });
});
