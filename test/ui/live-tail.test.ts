/**
 * The explorer's live tail in Chromium (GET /api/request-logs/stream/, read with fetch since the UI
 * authenticates with a header): with Live on, a new log arrives above the rows; with a log open it waits
 * behind a "N new logs" pill instead, which shows it when clicked.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser } from 'playwright-core';
import { launchChromium, watchedPage, withoutChromium } from '../support/chromium.js';
import { api, startApp, type TestApp } from '../support/harness.js';

describe('live tail in the explorer', { skip: withoutChromium }, () => {
  let t: TestApp;
  let key: string;
  let browser: Browser;
  const problems: string[] = [];

  before(async () => {
    t = await startApp();
    key = (await t.tenant()).key;
    const res = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', {
      key,
      body: [1, 2, 3].map((i) => ({ model: `old-${i}`, timestamp: new Date(Date.now() - i * 60_000).toISOString() })),
    });
    assert.equal(res.status, 201);
    await t.flush();
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await t?.close();
  });

  const create = async (model: string) => {
    const res = await api(t.baseUrl, 'POST', '/api/request-logs/create/', { key, body: { model } });
    assert.equal(res.status, 201);
    await t.flush();
  };

  it('puts new logs above the rows, or behind a pill while a log is open', async () => {
    const page = await watchedPage(browser, problems);
    await page.goto(`${t.baseUrl}/ui/`);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('1–3 of 3 logs').waitFor();
    const opened = page.waitForResponse((r) => r.url().includes('/api/request-logs/stream/'));
    await page.getByRole('button', { name: 'Live' }).click();
    assert.equal((await opened).status(), 200);
    assert.equal(await page.getByRole('button', { name: /Live/ }).getAttribute('aria-pressed'), 'true');
    const rows = page.getByRole('grid', { name: 'Logs' }).locator('tbody tr[data-log-id]');

    await create('live-1');
    await page.getByText('1–4 of 4 logs').waitFor();
    assert.match(await rows.first().innerText(), /live-1/);

    // Reading a log: the next one waits behind the pill, the rows stay where they are.
    await rows.nth(2).click();
    await page.getByRole('dialog', { name: 'Log detail' }).waitFor();
    await create('live-2');
    await page.getByRole('button', { name: '1 new log' }).waitFor();
    assert.match(await rows.first().innerText(), /live-1/);
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: '1 new log' }).click();
    await page.getByText('1–5 of 5 logs').waitFor();
    assert.match(await rows.first().innerText(), /live-2/);

    // Off: no more logs arrive.
    await page.getByRole('button', { name: /Live/ }).click();
    await create('live-3');
    await page.waitForTimeout(1500);
    assert.match(await rows.first().innerText(), /live-2/);
    await page.close();
  });

  it('offers Live only for filters the stream takes (equality and not)', async () => {
    const page = await watchedPage(browser, problems);
    await page.goto(`${t.baseUrl}/ui/`);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('grid', { name: 'Logs' }).waitFor();
    const filters = JSON.stringify([{ field: 'cost', operator: 'gte', values: [0] }]);
    await page.goto(`${t.baseUrl}/ui/?filters=${encodeURIComponent(filters)}`);
    await page.getByRole('button', { name: /^Remove filter cost/ }).waitFor();
    const liveButton = page.getByRole('button', { name: 'Live' });
    assert.equal(await liveButton.isDisabled(), true);
    assert.match((await liveButton.getAttribute('title')) ?? '', /equals, not equals/);
    await page.close();
  });

  it('met no script error or policy violation', () => {
    assert.deepEqual(problems, []);
  });
});
