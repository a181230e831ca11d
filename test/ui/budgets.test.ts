/**
 * The web UI's Budgets page in a real browser (Debian's Chromium through playwright-core) against a real
 * gatelog in front of the fake provider, priced so the numbers are whole (gpt-4o-mini's prompt free, each
 * output token $1: a call with max_tokens 10 reserves $10, and the fake's answer of 4 tokens costs $4).
 * A budget made for a key through the form (a refusal said next to its field first, its webhook's secret
 * shown once), listed with $0 spent; a real call through the gateway with that key, then its spend and
 * bar after a reload; the budget's calls link opening the explorer on that call (and its spenders link
 * the dashboard, whose top keys are that key); the key's row on the Keys page showing the spend; the
 * amount edited (only it sent), a call then refused and found by the Refused link; the budget deleted;
 * a key without admin told which scope the page needs.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { watchedPage, withoutChromium } from '../support/chromium.js';
import { browserSession, logsGrid, screenshotPath, servedProxyApp } from '../support/browser-session.js';
import { columnIndex, documentWidths, foldedTexts } from '../support/page-checks.js';

const pricingDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatelog-ui-budgets-'));
const pricing = path.join(pricingDir, 'pricing.json');
fs.writeFileSync(pricing, JSON.stringify({ 'gpt-4o-mini': { input_per_million: 0, output_per_million: 1_000_000 } }));

describe('web UI budgets in Chromium', { skip: withoutChromium }, () => {
  /** The key the budget is for: its id, name and secret. */
  const dev = { id: '', secret: '' };
  const made = { budgetId: '', callLogId: '', refusedLogId: '' };
  const session = browserSession({
    start: () => servedProxyApp({ GATELOG_PRICING_FILE: pricing }),
    seed: async ({ api }) => {
      const key = await api('POST', '/api/keys/', { body: { name: 'dev-7', scopes: ['models'] } });
      assert.equal(key.status, 201, key.text);
      Object.assign(dev, { id: key.body.id, secret: key.body.key });
    },
  });
  after(() => fs.rmSync(pricingDir, { recursive: true, force: true }));

  /** A page on the Budgets screen, with a clipboard it may write and read. */
  const budgetsPage = async (key?: string): Promise<Page> => {
    const page = await watchedPage(session.browser, session.problems, {
      viewport: { width: 1280, height: 900 },
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    await session.signIn(page, '?v=budgets', { key, ready: (p) => p.getByRole('heading', { name: 'Budgets' }) });
    return page;
  };
  const table = (page: Page) => page.getByRole('table', { name: 'Budgets' });
  const rowOf = (page: Page) => table(page).locator(`tr[data-budget-id="${made.budgetId}"]`);
  /** A row's cells by their column's header. */
  const cellsOf = async (page: Page): Promise<Record<string, string>> => {
    const headers = (await table(page).locator('thead th').allInnerTexts()).map((h) => h.trim());
    const cells = await foldedTexts(rowOf(page).locator('td'));
    return Object.fromEntries(headers.map((h, i) => [h, cells[i]]));
  };
  /** The budget as the API reads it, once every call's log is written and its spend settled. */
  const standing = async () => {
    await session.t.flush();
    await session.t.budgets.settled();
    const res = await session.api('GET', `/api/budgets/${made.budgetId}/`);
    assert.equal(res.status, 200, res.text);
    return res.body as { spent_usd: number; reserved_usd: number; amount_usd: number };
  };
  const ask = () =>
    new OpenAI({ apiKey: dev.secret, baseURL: `${session.t.baseUrl}/api`, maxRetries: 0 }).chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 })
      .withResponse();

  it('makes a budget for a key through the form: a refusal beside its field, the secret once, $0 spent', async () => {
    const page = await budgetsPage();
    await page.getByText('No budgets yet.').waitFor();
    const sent: unknown[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST' && r.url().includes('/api/budgets/')) sent.push(r.postDataJSON());
    });
    const form = page.getByRole('form', { name: 'Create a budget' });
    await form.getByLabel('Name').fill('dev-7 monthly');
    assert.equal(await form.getByLabel('Applies to').inputValue(), 'key');
    await form.getByLabel(/^Key/).selectOption(dev.id);
    await form.getByLabel('Amount (USD)').fill('$50');
    assert.equal(await form.getByLabel('Period').inputValue(), 'month');
    assert.equal(await form.getByLabel('Time zone').inputValue(), 'UTC');
    const thresholds = form.getByLabel('Alert thresholds (%)');
    assert.equal(await thresholds.inputValue(), '80, 100', 'alerts at 80% and 100% by default');

    // Not a percentage: said next to the field, the field marked, nothing sent.
    await thresholds.fill('80, lots');
    await form.getByRole('button', { name: 'Create budget' }).click();
    const thresholdsError = form.locator('[id="new-budget-alert_thresholds-error"]');
    await thresholdsError.waitFor();
    assert.match(await thresholdsError.innerText(), /'lots' is not a percentage/);
    assert.equal(await thresholds.getAttribute('aria-invalid'), 'true');
    assert.equal(sent.length, 0, 'nothing sent');

    // A time zone the server does not know: its refusal next to the field.
    await thresholds.fill('50%, 100');
    const tz = form.getByLabel('Time zone');
    await tz.fill('Mars/Olympus');
    await form.getByRole('button', { name: 'Create budget' }).click();
    const tzError = form.locator('[id="new-budget-tz-error"]');
    await tzError.waitFor();
    assert.match(await tzError.innerText(), /'Mars\/Olympus' is not a time zone/);
    assert.equal(await tz.getAttribute('aria-invalid'), 'true');
    assert.equal(await thresholdsError.count(), 0);

    await tz.fill('UTC');
    await form.getByLabel('Webhook URL (optional)').fill('http://127.0.0.1:9/budget-alerts');
    await form.getByRole('button', { name: 'Create budget' }).click();
    const dialog = page.getByRole('dialog', { name: 'Webhook secret' });
    await dialog.waitFor();
    const secret = await dialog.getByLabel('Webhook secret of dev-7 monthly').inputValue();
    assert.match(secret, /^whsec_/);
    assert.match(await dialog.getByRole('note').innerText(), /will not be shown again/);
    await dialog.getByRole('button', { name: 'Copy' }).click();
    await dialog.getByRole('button', { name: 'Copied' }).waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), secret);
    await dialog.getByRole('button', { name: 'Done' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.ok(!(await page.content()).includes(secret), 'the secret is gone from the page once closed');

    assert.deepEqual(sent.at(-1), {
      name: 'dev-7 monthly',
      applies_to: { type: 'key', value: dev.id },
      amount_usd: 50,
      period: 'month',
      tz: 'UTC',
      alert_thresholds: [0.5, 1],
      webhook_url: 'http://127.0.0.1:9/budget-alerts',
      allow_unpriced: false,
    });
    const listed = await session.api('GET', '/api/budgets/');
    assert.equal(listed.body.count, 1);
    made.budgetId = listed.body.results[0].id;
    assert.equal(await form.getByLabel('Name').inputValue(), '', 'the form is empty again');

    const cells = await cellsOf(page);
    assert.deepEqual(
      [cells.Name, cells['Applies to'], cells.Period, cells.Spent, cells.Remaining],
      ['dev-7 monthly', 'Key dev-7', 'Month', '$0 of $50 this month', '$50'],
    );
    assert.match(cells['Period ends'], /in \d+ (days?|h)/);
    assert.match(cells.Alerts, /^50%, 100% to the webhook$/);
    await page.close();
  });

  it('shows the spend of a call made through the gateway, and its bar, after a reload', async () => {
    const page = await budgetsPage();
    await rowOf(page).waitFor();
    const { response } = await ask();
    made.callLogId = response.headers.get('x-gatelog-log-id') ?? '';
    assert.ok(made.callLogId, 'the answer names its log');
    assert.deepEqual(
      await standing().then((s) => [s.spent_usd, s.reserved_usd]),
      [4, 0],
      'the call cost $4, nothing held',
    );

    await page.reload();
    const spent = rowOf(page).getByText('$4 of $50 this month');
    await spent.waitFor();
    const cells = await cellsOf(page);
    assert.equal(cells.Remaining, '$46');
    const bar = rowOf(page).getByRole('img');
    assert.equal(await bar.getAttribute('aria-label'), 'Spent $4, reserved $0, $46 left of $50');
    const width = (part: string) =>
      bar.locator(`[data-part="${part}"]`).evaluate((e) => (e as unknown as { style: { width: string } }).style.width);
    assert.deepEqual([await width('spent'), await width('reserved'), await width('rest')], ['8%', '0%', '92%']);
    const spentBox = await bar.locator('[data-part="spent"]').boundingBox();
    assert.ok(spentBox && spentBox.width > 0, 'the spent part is drawn');
    for (const theme of ['light', 'dark']) {
      await page.getByLabel('Theme').selectOption(theme);
      await page.screenshot({ path: screenshotPath(`budgets-${theme}.png`), fullPage: true });
    }
    await page.getByLabel('Theme').selectOption('system');
    await page.close();
  });

  it("opens the explorer on the budget's calls this period, the call among them, and the dashboard on them", async () => {
    const page = await budgetsPage();
    await rowOf(page).getByRole('link', { name: 'Calls of budget dev-7 monthly' }).click();
    const grid = logsGrid(page);
    await grid.locator(`tr[data-log-id="${made.callLogId}"]`).waitFor();
    assert.equal(await grid.locator('tbody tr[data-log-id]').count(), 1, 'only the key’s call');
    const url = new URL(page.url());
    assert.deepEqual(JSON.parse(url.searchParams.get('filters')!), [
      { field: 'api_key_id', operator: '', values: [dev.id] },
    ]);
    const budget = (await session.api('GET', `/api/budgets/${made.budgetId}/`)).body;
    assert.deepEqual(
      [url.searchParams.get('from'), url.searchParams.get('to')],
      [budget.period_start, budget.period_end],
      'the window is the period',
    );

    // Its biggest spenders: the dashboard over the same calls, its top keys the one key.
    await page.goBack();
    await rowOf(page).getByRole('link', { name: 'Biggest spenders of budget dev-7 monthly' }).click();
    const topKeys = page.getByRole('table', { name: 'Top keys' }).locator('tbody tr');
    await topKeys.first().waitFor();
    assert.deepEqual(
      (await foldedTexts(topKeys)).map((row) => row.split(' ')[0]),
      ['dev-7'],
    );
    assert.equal(new URL(page.url()).searchParams.get('v'), 'dashboard');
    await page.close();
  });

  it("shows the spend on the key's row of the Keys page, a link to its calls", async () => {
    const page = await watchedPage(session.browser, session.problems, { viewport: { width: 1280, height: 900 } });
    await session.signIn(page, '?v=keys', { ready: (p) => p.getByRole('table', { name: 'Keys' }) });
    const keys = page.getByRole('table', { name: 'Keys' });
    const row = keys.locator(`tr[data-key-id="${dev.id}"]`);
    const budgetCell = row.locator('td').nth(await columnIndex(keys, 'Budget'));
    const link = budgetCell.getByRole('link', { name: '$4 of $50 this month' });
    await link.waitFor();
    assert.equal(await link.getAttribute('title'), 'Budget dev-7 monthly: its calls this period');
    // The keys without a budget (the one signed in with) show none.
    const others = keys.locator(`tr[data-key-id]:not([data-key-id="${dev.id}"])`);
    const at = await columnIndex(keys, 'Budget');
    assert.deepEqual(await foldedTexts(others.locator(`td:nth-child(${at + 1})`)), ['—']);
    await page.screenshot({ path: screenshotPath('budgets-keys-spend.png'), fullPage: true });
    await link.click();
    await logsGrid(page).locator(`tr[data-log-id="${made.callLogId}"]`).waitFor();
    await page.close();
  });

  it('edits the amount, sending only it; a call then refused is found by the Refused link', async () => {
    const page = await budgetsPage();
    const patches: unknown[] = [];
    page.on('request', (r) => {
      if (r.method() === 'PATCH') patches.push(r.postDataJSON());
    });
    await rowOf(page).getByRole('button', { name: 'Edit budget dev-7 monthly' }).click();
    const form = page.getByRole('form', { name: 'Edit budget dev-7 monthly' });
    assert.equal(await form.getByLabel('Applies to').count(), 0, 'what a budget applies to stays');
    await form.getByText('Applies to: Key dev-7').waitFor();
    assert.equal(await form.getByLabel('Alert thresholds (%)').inputValue(), '50, 100');
    await form.getByLabel('Amount (USD)').fill('5');
    await form.getByRole('button', { name: 'Save budget' }).click();
    await form.waitFor({ state: 'detached' });
    await rowOf(page).getByText('$4 of $5 this month').waitFor();
    assert.deepEqual(patches, [{ amount_usd: 5 }]);
    assert.equal((await cellsOf(page)).Remaining, '$1');
    assert.equal(await page.getByRole('dialog').count(), 0, 'the webhook kept its secret: none shown');

    // $1 left, and the call may cost $10: refused before anything is sent.
    const refused = await ask().then(
      () => assert.fail('the call was not refused'),
      (err: unknown) => err,
    );
    assert.ok(refused instanceof OpenAI.APIError && refused.status === 402, String(refused));
    made.refusedLogId = refused.headers?.get('x-gatelog-log-id') ?? '';
    await standing();
    await rowOf(page).getByRole('link', { name: 'Calls refused by budget dev-7 monthly' }).click();
    const grid = logsGrid(page);
    await grid.locator(`tr[data-log-id="${made.refusedLogId}"]`).waitFor();
    assert.equal(await grid.locator('tbody tr[data-log-id]').count(), 1, 'the refusal only, not the call that passed');
    await page.close();
  });

  it('deletes the budget after asking', async () => {
    const page = await budgetsPage();
    const row = rowOf(page);
    await row.getByRole('button', { name: 'Delete budget dev-7 monthly' }).click();
    await row.getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await session.api('GET', '/api/budgets/')).body.count, 1, 'cancelled: still there');
    await row.getByRole('button', { name: 'Delete budget dev-7 monthly' }).click();
    await row.getByRole('button', { name: 'Delete dev-7 monthly' }).click();
    await page.getByText('No budgets yet.').waitFor();
    assert.equal((await session.api('GET', '/api/budgets/')).body.count, 0);
    assert.equal((await session.api('GET', `/api/budgets/${made.budgetId}/`)).status, 404);
    await page.close();
  });

  it('fits a budget on a phone: no sideways scrolling', async () => {
    const made = await session.api('POST', '/api/budgets/', {
      body: { name: 'acme daily', applies_to: { type: 'customer', value: 'acme' }, amount_usd: 20, period: 'day' },
    });
    assert.equal(made.status, 201, made.text);
    const page = await session.signedIn('?v=budgets', {
      viewport: { width: 390, height: 844 },
      ready: (p) => p.getByRole('table', { name: 'Budgets' }).getByText('Customer acme'),
    });
    const { scroll, client } = await documentWidths(page);
    assert.ok(scroll <= client, `the page scrolls sideways by ${scroll - client} px`);
    await page.screenshot({ path: screenshotPath('budgets-phone.png'), fullPage: true });
    await page.close();
  });

  it('tells a key without admin which scope the page needs', async () => {
    const reader = await session.api('POST', '/api/keys/', { body: { name: 'budget-reader', scopes: ['read'] } });
    assert.equal(reader.status, 201, reader.text);
    const page = await budgetsPage(reader.body.key);
    const note = page.getByRole('note');
    await note.waitFor();
    assert.match(await note.innerText(), /Budgets page needs a key with the admin scope/);
    assert.equal(await page.getByRole('table').count(), 0);
    await page.getByRole('link', { name: 'Budgets (needs admin)' }).waitFor();
    await page.close();
  });

  it('ran without a script error or a Content-Security-Policy violation', () => {
    // The API's refusal the form shows (400) is a failed call the browser reports on its console.
    assert.deepEqual(session.problemsExcept(/status of 400/), []);
  });
});
