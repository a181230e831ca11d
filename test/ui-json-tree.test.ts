/**
 * The log panel's JSON tree in Chromium: a log's input, output and metadata as foldable trees, large
 * branches folded from the start, and a search that marks every match and unfolds the branches to it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser } from 'playwright-core';
import { launchChromium, watchedPage, withoutChromium } from './support/chromium.js';
import { api, startApp, type TestApp } from './support/harness.js';

const OPEN_OF = (summary: string) =>
  `(() => { const s = [...document.querySelectorAll('.json-tree summary')].find((x) => x.textContent.startsWith(${JSON.stringify(summary)})); return s ? s.parentElement.open : null; })()`;

describe('the JSON tree of the log panel', { skip: withoutChromium }, () => {
  let t: TestApp;
  let key: string;
  let browser: Browser;
  const problems: string[] = [];

  before(async () => {
    t = await startApp();
    key = (await t.tenant()).key;
    const input = {
      task: 'classify',
      items: Array.from({ length: 60 }, (_, i) => ({ n: i, label: `item-${i}` })),
      options: { depth: { rare: 'needle-in-the-tree', other: 1 } },
    };
    const res = await api(t.baseUrl, 'POST', '/api/request-logs/create/', {
      key,
      body: { model: 'tree', input: JSON.stringify(input), output: '{"ok":true}', metadata: { team: 'Search' } },
    });
    assert.equal(res.status, 201);
    await t.flush();
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it('folds the large branches, and a search marks matches and unfolds the way to them', async () => {
    const page = await watchedPage(browser, problems);
    await page.goto(`${t.baseUrl}/ui/`);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('grid', { name: 'Logs' }).locator('tbody tr').first().click();
    const dialog = page.getByRole('dialog', { name: 'Log detail' });
    const tree = dialog.getByRole('group', { name: 'Input as a tree' });
    await tree.waitFor();
    // The root and the small branch open; the 60 items folded.
    assert.equal(await page.evaluate(OPEN_OF('items: [60 items]')), false);
    assert.equal(await page.evaluate(OPEN_OF('options: {1 keys}')), true);
    await tree.getByLabel('Search in Input').fill('ITEM-42');
    await tree.getByText('1 match').waitFor();
    assert.equal(await page.evaluate(OPEN_OF('items: [60 items]')), true);
    assert.equal(await tree.locator('mark').innerText(), 'item-42');
    assert.ok(await tree.locator('mark').isVisible());
    // Keys match too.
    await tree.getByLabel('Search in Input').fill('rare');
    await tree.getByText('1 match').waitFor();
    assert.ok(await tree.locator('mark', { hasText: 'rare' }).isVisible());
    await tree.getByLabel('Search in Input').fill('');
    assert.equal(await tree.locator('mark').count(), 0);
    // Metadata as a tree as well (folded under its table until asked for).
    await dialog.getByText('Metadata as JSON').click();
    await dialog.getByRole('group', { name: 'Metadata as a tree' }).getByText('Search').waitFor();
    await page.close();
  });

  it('met no script error or policy violation', () => {
    assert.deepEqual(problems, []);
  });
});
