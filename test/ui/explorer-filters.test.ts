/**
 * The explorer's filters in a real browser (Debian's Chromium through playwright-core) against a real
 * gatelog: a mistyped filter refused with the field meant while the table stays, a link's quick filters
 * shown as chips, wider time windows offered when a search finds nothing in the hour, and a metadata key,
 * the error code and the error message as columns, exported as CSV columns, and the code beside the
 * message in the log's panel, a filter away.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { type Page } from 'playwright-core';
import { withoutChromium } from '../support/chromium.js';
import { browserSession, logsGrid } from '../support/browser-session.js';
import { pollUntil } from '../support/poll.js';
import { EXPECTED_FAILED_CALLS, wideExplorer, wideLogs } from '../support/wide-explorer.js';

describe('web UI filters, refused and offered, in Chromium', { skip: withoutChromium }, () => {
  const session = browserSession({ seed: (s) => s.seedLogs(wideLogs(Date.now())) });

  const rows = (page: Page) => logsGrid(page).locator('tbody tr');

  it('refuses a mistyped filter before it replaces the table, and says which field was meant', async () => {
    const page = await wideExplorer(session, { width: 1280, height: 900 });
    const before = new URL(page.url()).search;
    const text = page.getByLabel('Filters as text');

    // Caught in the page: "modle" is no field, "model" is one edit away.
    await text.fill('modle:gpt-4o');
    await text.press('Enter');
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match(await alert.innerText(), /Unknown filter field 'modle'/);
    assert.match(await alert.innerText(), /Did you mean model\?/);
    assert.equal(await rows(page).count(), 50, 'the table is kept');
    await page.getByText('1–50 of 60 logs').waitFor();
    assert.equal(new URL(page.url()).search, before, 'the URL keeps the filters that work');
    assert.equal(await text.inputValue(), 'modle:gpt-4o', 'what was typed stays, to be corrected');
    await page
      .getByRole('button', { name: /fields you can filter on/i })
      .or(page.getByText('Fields you can filter on'))
      .first()
      .click();
    assert.match(await alert.innerText(), /customer_identifier/);

    // The suggestion applies the filter with the field meant.
    await alert.getByRole('button', { name: 'model' }).click();
    await page.getByText('1–20 of 20 logs').waitFor();
    assert.equal(await page.getByRole('alert').count(), 0);
    assert.deepEqual(JSON.parse(new URL(page.url()).searchParams.get('filters')!), [
      { field: 'model', operator: '', values: ['gpt-4o'] },
    ]);

    // Refused by gatelog (a cost that is not a number: a 400 naming filters.cost…): the table stays too.
    const listed = new URL(page.url()).search;
    await text.fill('model:gpt-4o cost>cheap');
    await text.press('Enter');
    await page.getByRole('alert').waitFor();
    assert.match(await page.getByRole('alert').innerText(), /Not applied: .*cost/);
    assert.equal(await rows(page).count(), 20, 'the table is kept');
    assert.equal(new URL(page.url()).search, listed);

    // A disabled action says why.
    await text.fill('model:no-such-model');
    await text.press('Enter');
    await page.getByText('No logs match these filters in this time window.').waitFor();
    const exportButton = page.getByRole('button', { name: 'Export…' });
    assert.equal(await exportButton.isDisabled(), true);
    assert.match((await exportButton.getAttribute('title')) ?? '', /No logs match/);
    const describedBy = (await exportButton.getAttribute('aria-describedby'))!;
    assert.match(await page.locator(`#${describedBy}`).innerText(), /No logs match/);
    await page.close();
  });

  it("passes a link's URL quick filters on to gatelog and shows them as chips", async () => {
    const page = await wideExplorer(session, { width: 1280, height: 900 });
    const answered = page.waitForResponse(
      (r) => r.url().includes('/api/request-logs/list/') && r.url().includes('modle='),
    );
    await page.goto(session.ui('?modle=gpt-4o'));
    const answer = await answered;
    await page.getByText('No logs match these filters in this time window.').waitFor();
    const read = answer.headers()['x-gatelog-metadata-filters'];
    // gatelog reads an unknown name as a metadata key: the chip says so when gatelog says it did.
    const chip = page.getByRole('list', { name: /Active filters/ }).getByRole('listitem');
    assert.equal(await chip.count(), 1);
    assert.match(await chip.innerText(), read?.includes('modle') ? /metadata\.modle is gpt-4o/ : /modle is gpt-4o/);
    await chip.getByRole('button', { name: /Remove filter/ }).click();
    await page.getByText('1–50 of 60 logs').waitFor();
    assert.equal(new URL(page.url()).searchParams.get('modle'), null);
    await page.close();
  });

  it('offers the last 7 and 30 days, with their counts, when a search finds nothing in the hour', async () => {
    const page = await wideExplorer(session, { width: 1280, height: 900 });
    await page.getByLabel('Search what was said').fill('zebra');
    await page.getByLabel('Search what was said').press('Enter');
    await page.getByText('No logs match these filters in this time window.').waitFor();
    const offers = page.getByTestId('wider-windows');
    const week = offers.getByRole('button', { name: 'Search the last 7 days (1)' });
    await week.waitFor();
    await offers.getByRole('button', { name: 'Search the last 30 days (2)' }).waitFor();
    await week.click();
    await page.getByText('1–1 of 1 log').waitFor();
    assert.equal(new URL(page.url()).searchParams.get('range'), '7d');
    assert.match(await rows(page).first().innerText(), /zebra/);
    // In the 7 days, only the month is wider.
    await page.getByLabel('Search what was said').fill('no-such-word-anywhere');
    await page.getByLabel('Search what was said').press('Enter');
    await offers.getByRole('button', { name: 'Search the last 30 days (0)' }).waitFor();
    assert.equal(await offers.getByRole('button').count(), 1);
    await page.close();
  });

  it('shows a metadata key and the error message as columns, and exports them as CSV columns', async () => {
    const failed = JSON.stringify([{ field: 'status_code', operator: '', values: [500] }]);
    const page = await wideExplorer(
      session,
      { width: 1280, height: 900 },
      'light',
      `?filters=${encodeURIComponent(failed)}`,
    );
    await page.getByText('1–1 of 1 log').waitFor();
    await page.getByText('Columns', { exact: true }).click();
    await page.getByRole('checkbox', { name: 'Error', exact: true }).check();
    await page.getByRole('checkbox', { name: 'Error code' }).check();
    await page.getByRole('checkbox', { name: 'metadata.feature' }).check();
    await page.getByText('Columns', { exact: true }).click();
    const grid = page.getByRole('grid', { name: 'Logs' });
    const headers = (await grid.locator('thead th').allInnerTexts()).map((h) => h.trim());
    const cell = (name: string) => rows(page).first().locator('td').nth(headers.indexOf(name));
    assert.equal((await cell('Error').innerText()).trim(), 'upstream, exploded');
    assert.equal((await cell('feature').innerText()).trim(), 'chat');
    assert.equal((await cell('Error code').innerText()).trim(), 'upstream_error');
    await page.getByRole('button', { name: 'Export…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Export logs' });
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      dialog.getByRole('button', { name: 'Export' }).click(),
    ]);
    const csv = fs
      .readFileSync((await download.path())!, 'utf8')
      .trim()
      .split('\r\n');
    const header = csv[0].split(',');
    assert.ok(header.includes('error_message') && header.includes('metadata__feature'), csv[0]);
    assert.match(csv[1], /"upstream, exploded"/);
    assert.match(csv[1], /,chat(,|$)/);
    assert.ok(header.includes('error_code'), csv[0]);
    assert.match(csv[1], /,upstream_error,/);

    // The panel shows the code beside the message; its "=" filters every call that failed the same way.
    await dialog.waitFor({ state: 'detached' });
    await rows(page).first().click();
    const detail = page.getByRole('dialog', { name: 'Log detail' });
    const error = detail.locator('.facts > div', { has: page.locator('dt', { hasText: /^Error$/ }) });
    assert.match(
      (await error.locator('dd').innerText()).replace(/\s+/g, ' '),
      /^upstream_error\b.*· upstream, exploded$/,
    );
    await detail.getByRole('button', { name: 'Only error_code upstream_error' }).click();
    const codeFilter = () =>
      (JSON.parse(new URL(page.url()).searchParams.get('filters') ?? '[]') as { field: string }[]).find(
        (f) => f.field === 'error_code',
      );
    await pollUntil(async () => codeFilter() !== undefined, 'the error_code filter in the URL');
    assert.deepEqual(codeFilter(), { field: 'error_code', operator: '', values: ['upstream_error'] });
    await page.getByText('1–1 of 1 log').waitFor();
    // Back to the default columns for the tests after.
    await page.evaluate("localStorage.removeItem('gatelog.columns')");
    await page.close();
  });

  it('ran without a script error', () => {
    // Failed calls are on the console by design here: refused filters (400).
    assert.deepEqual(session.problemsExcept(EXPECTED_FAILED_CALLS), []);
  });
});
