/**
 * The log views in Chromium: a log's input, output and metadata as foldable trees (large branches folded
 * from the start, a search that marks every match and unfolds the branches to it); two to four ticked
 * logs compared side by side; the ⌘K palette.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Page } from 'playwright-core';
import { tickBox, withoutChromium } from '../support/chromium.js';
import { browserSession, logsGrid, openAndWait, screenshotPath } from '../support/browser-session.js';

/** Screenshots of what the page shows, in the light theme and the dark one. */
async function shots(page: Page, name: string): Promise<void> {
  for (const theme of ['light', 'dark']) {
    await page.evaluate(`document.documentElement.dataset.theme = '${theme}'`);
    const shot = await page.screenshot({ path: screenshotPath(`${name}-${theme}.png`) });
    assert.ok(shot.length > 1000);
  }
}

const OPEN_OF = (summary: string) =>
  `(() => { const s = [...document.querySelectorAll('.json-tree summary')].find((x) => x.textContent.startsWith(${JSON.stringify(summary)})); return s ? s.parentElement.open : null; })()`;

describe("the log panel's JSON tree, logs compared, the ⌘K palette", { skip: withoutChromium }, () => {
  let treeLogId: string;
  const session = browserSession({
    seed: async (s) => {
      const input = {
        task: 'classify',
        items: Array.from({ length: 60 }, (_, i) => ({ n: i, label: `item-${i}` })),
        options: { depth: { rare: 'needle-in-the-tree', other: 1 } },
      };
      const res = await s.api('POST', '/api/request-logs/create/', {
        body: { model: 'tree', input: JSON.stringify(input), output: '{"ok":true}', metadata: { team: 'Search' } },
      });
      assert.equal(res.status, 201);
      treeLogId = res.body.unique_id;
      // Three logs to compare, older than the one above: two models, two costs, inputs a line apart.
      await s.seedLogs(
        [0, 1, 2].map((i) => ({
          model: i === 1 ? 'cmp-b' : 'cmp-a',
          cost: i === 1 ? 0.02 : 0.01,
          customer_identifier: 'cmp',
          input: JSON.stringify({ q: 'same question', x: i === 2 ? 0 : i }),
          output: 'an answer',
          timestamp: new Date(Date.now() - 60_000 * (i + 1)).toISOString(),
        })),
      );
    },
  });

  /** The logs of customer "cmp", the three to compare. */
  const COMPARED = `?filters=${encodeURIComponent(JSON.stringify([{ field: 'customer_identifier', operator: '', values: ['cmp'] }]))}`;

  it('folds the large branches, and a search marks matches and unfolds the way to them', async () => {
    const page = await session.signedIn();
    await logsGrid(page).locator('tbody tr').first().click();
    const dialog = page.getByRole('dialog', { name: 'Log detail' });
    const tree = dialog.getByRole('group', { name: 'Input as a tree' });
    await tree.waitFor();
    // The root and the small branch open; the 60 items folded.
    assert.equal(await page.evaluate(OPEN_OF('items: [60 items]')), false);
    assert.equal(await page.evaluate(OPEN_OF('options: {1 keys}')), true);
    await tree.getByLabel('Search in Input').fill('ITEM-42');
    await tree.getByText('1 match').waitFor();
    await shots(page, 'json-tree');
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

  it('compares ticked logs side by side, marking what differs from the first', async () => {
    const page = await session.signedIn('', { ready: logsGrid });
    await openAndWait(page, session.ui(COMPARED), '1–3 of 3 logs');
    // The strip over the table has its numbers: nothing above the rows is still arriving.
    await page.getByRole('figure', { name: 'Requests and errors over time' }).getByText('Requests 3').waitFor();
    const ticks = logsGrid(page).getByRole('checkbox', { name: /^Select log/ });
    await tickBox(ticks.nth(0));
    assert.equal(await page.getByRole('button', { name: /^Compare/ }).count(), 0, 'one log is not a comparison');
    await tickBox(ticks.nth(1));
    await tickBox(ticks.nth(2));
    await page.getByRole('button', { name: 'Compare 3' }).click();
    const table = page.getByRole('dialog', { name: 'Compare logs' }).getByRole('table', { name: 'Logs compared' });
    await table.waitFor();
    const row = (name: string) => table.getByRole('row').filter({ has: page.getByRole('rowheader', { name }) });
    const differs = (name: string) =>
      row(name)
        .locator('td')
        .evaluateAll((cells) => cells.map((c) => c.hasAttribute('data-differs')));
    // Newest first: x=0 cmp-a 0.01, then x=1 cmp-b 0.02, then x=0 cmp-a 0.01.
    assert.deepEqual(await differs('Model'), [false, true, false]);
    assert.deepEqual(await differs('Cost'), [false, true, false]);
    assert.match(await row('Cost').locator('td').nth(1).innerText(), /\+.*\(\+100 %\)/);
    const changed = await row('Input').locator('[data-differs]').allInnerTexts();
    assert.deepEqual(
      changed.map((l) => l.trim()),
      ['"x": 1'],
    );
    await shots(page, 'compare');
    await page.close();
  });

  it('runs commands from the ⌘K palette: screens, saved views, logs by id, actions, the theme', async () => {
    const view = await session.api('POST', '/api/views/', {
      body: { name: 'Compared ones', query: COMPARED, columns: [] },
    });
    assert.equal(view.status, 201, view.text);
    const page = await session.signedIn('', { ready: '1–4 of 4 logs' });
    const palette = page.getByRole('dialog', { name: 'Command palette' });
    const command = async (text: string) => {
      await page.keyboard.press('Control+k');
      await palette.getByRole('combobox', { name: 'Command' }).fill(text);
      await palette.getByRole('option').first().waitFor();
      await page.keyboard.press('Enter');
      await palette.waitFor({ state: 'detached' });
    };
    await command('go datasets');
    await page.waitForURL(/[?&]v=datasets/);
    await command('go dashboard');
    await page.waitForURL(/[?&]v=dashboard/);
    await page.getByRole('list', { name: 'Totals' }).waitFor();
    await command('compared');
    await page.getByText('1–3 of 3 logs').waitFor();
    assert.ok(new URL(page.url()).searchParams.get('filters')?.includes('cmp'));
    await command(treeLogId);
    await page.getByRole('dialog', { name: 'Log detail' }).waitFor();
    assert.equal(new URL(page.url()).searchParams.get('log'), treeLogId);
    await page.keyboard.press('Escape');
    // The log just opened is offered among the recent ones; ↓ moves the choice.
    await page.keyboard.press('Control+k');
    await palette.getByRole('combobox').fill('recent');
    await palette.getByRole('option', { name: new RegExp(treeLogId) }).waitFor();
    await shots(page, 'palette');
    await page.keyboard.press('Escape');
    await palette.waitFor({ state: 'detached' });
    const before = await page.evaluate('document.documentElement.dataset.theme');
    await command('theme');
    assert.notEqual(await page.evaluate('document.documentElement.dataset.theme'), before);
    assert.equal(await page.getByLabel('Theme').inputValue(), before === 'dark' ? 'light' : 'dark');
    await command('export');
    await page.getByRole('dialog', { name: 'Export logs' }).getByText('Export 3 logs').waitFor();
    await page.close();
  });

  it('met no script error or policy violation', () => {
    assert.deepEqual(session.problems, []);
  });
});
