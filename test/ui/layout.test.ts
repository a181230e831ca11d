/**
 * The log explorer in a real browser (Debian's Chromium through playwright-core) against a real gatelog,
 * for what a new user trips over in the first hour: the table fits a laptop screen (every named column
 * in view at 1280 and 1440 px, no sideways scroll), the phone layout (390×844, light and dark), side
 * panels that take the focus, close on Esc and give it back. A mistyped filter: explorer-filters.test.ts;
 * gatelog going away: outages.test.ts. Screenshots go to GATELOG_UI_SCREENSHOTS (default: a temporary
 * directory).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Locator, type Page } from 'playwright-core';
import { tickBox, withoutChromium } from '../support/chromium.js';
import { browserSession, logsGrid, screenshotPath } from '../support/browser-session.js';
import { documentWidths, settles } from '../support/page-checks.js';
import { EXPECTED_FAILED_CALLS, wideExplorer, wideLogs } from '../support/wide-explorer.js';

/** The seven columns that must always be in view at 1280 px and up. */
const NAMED = ['Time', 'Status', 'Model', 'Customer', 'Tokens', 'Cost', 'Latency'];

describe('web UI layout and side panels in Chromium', { skip: withoutChromium }, () => {
  const session = browserSession({ seed: (s) => s.seedLogs(wideLogs(Date.now())) });

  const rows = (page: Page) => logsGrid(page).locator('tbody tr');

  /** The document does not scroll sideways. */
  async function noSidewaysScroll(page: Page, what: string) {
    const { scroll, client } = await documentWidths(page);
    assert.ok(scroll <= client, `${what}: the page is ${scroll} px wide in a ${client} px window`);
  }

  async function inView(locator: Locator, width: number, what: string) {
    const box = await locator.boundingBox();
    assert.ok(box, `${what} is shown`);
    assert.ok(box.width > 0 && box.x >= 0 && box.x + box.width <= width + 0.5, `${what} at ${JSON.stringify(box)}`);
  }

  /** The type scale of ui/src/styles.css (--text-sm … --text-xl). */
  const TYPE_SCALE = ['12px', '14px', '16px', '20px'];

  for (const width of [1280, 1440]) {
    it(`fits the table in ${width} px: every named column in view, the previews cut`, async () => {
      const page = await wideExplorer(session, { width, height: 900 });
      await noSidewaysScroll(page, `${width} px`);
      const grid = page.getByRole('grid', { name: 'Logs' });
      const table = await grid.boundingBox();
      assert.ok(table && table.x >= 0 && table.x + table.width <= width, `the table at ${JSON.stringify(table)}`);
      // The table's own box does not scroll either.
      assert.equal(
        await page.evaluate(
          '(() => { const b = document.querySelector(".logs-box"); return b.scrollWidth <= b.clientWidth; })()',
        ),
        true,
      );
      const headers = await grid.locator('thead th').allInnerTexts();
      for (const name of NAMED) {
        const index = headers.findIndex((h) => h.replace(/ [▲▼]$/, '') === name);
        assert.ok(index >= 0, `${name} is a column (${headers.join(', ')})`);
        await inView(grid.locator('thead th').nth(index), width, `the ${name} header`);
        const cell = rows(page).first().locator('td').nth(index);
        await inView(cell, width, `the first row's ${name}`);
        // Whole, not cut: a value of bounded width reads in full (a long model or customer name is
        // cut with an ellipsis, its whole text on hover).
        if (name === 'Model' || name === 'Customer') continue;
        const cut = await cell.evaluate((el) => el.scrollWidth > el.clientWidth);
        assert.equal(cut, false, `the first row's ${name} (${await cell.innerText()}) is not cut`);
      }
      // The previews take what is left, and are cut with an ellipsis.
      const input = rows(page).first().locator('td.c-input');
      await inView(input, width, 'the input preview');
      assert.equal(
        await input.evaluate((el) => el.ownerDocument.defaultView?.getComputedStyle(el).textOverflow),
        'ellipsis',
      );
      assert.equal(await input.evaluate((el) => el.scrollWidth > el.clientWidth), true, 'the preview is cut');
      // Costs at three significant digits, the smallest too, and never cut (the newest six).
      const costs = await rows(page).locator('td.c-cost').allInnerTexts();
      assert.deepEqual(costs.slice(0, 6), ['$0.0000000123', '$0.0000360', '$1,235', '$0.000123', '$12.3', '$0.0158']);
      const cutCosts = await rows(page)
        .locator('td.c-cost')
        .evaluateAll((cells) => cells.filter((c) => c.scrollWidth > c.clientWidth).map((c) => c.textContent));
      assert.deepEqual(cutCosts, [], 'no cost is cut');
      // One primary action in the toolbar (docs/decisions.md "One primary action"), and text only in
      // the type scale's sizes.
      assert.equal(await page.locator('.toolbar button.primary').count(), 1);
      const sizes = await page.evaluate(`(() => {
        const seen = new Set();
        for (const el of document.querySelectorAll('body *')) {
          const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim() !== '');
          if (own && el.getClientRects().length > 0) seen.add(getComputedStyle(el).fontSize);
        }
        return [...seen].sort();
      })()`);
      for (const size of sizes as string[])
        assert.ok(TYPE_SCALE.includes(size), `font size ${size} (${String(sizes)})`);
      await page.screenshot({ path: screenshotPath(`explorer-${width}.png`) });
      await page.close();
    });
  }

  for (const theme of ['light', 'dark']) {
    it(`is usable on a phone (390×844, ${theme}): header, toolbar and cards, nothing sideways`, async () => {
      const width = 390;
      const page = await wideExplorer(session, { width, height: 844 }, theme);
      assert.equal(await page.evaluate('document.documentElement.dataset.theme'), theme);
      await noSidewaysScroll(page, `390 px ${theme}`);
      for (const label of ['Theme', 'Times']) await inView(page.getByLabel(label), width, `the ${label} choice`);
      await inView(page.getByRole('button', { name: 'Sign out' }), width, 'Sign out');
      // The first screen: the time window, the search and the first logs; the rest folded behind Filters.
      for (const name of ['1h', 'Refresh']) {
        await inView(page.getByRole('button', { name, exact: true }), width, `the ${name} button`);
      }
      await inView(page.getByLabel('Search what was said'), width, 'the search');
      const firstRow = await rows(page).first().boundingBox();
      assert.ok(
        firstRow && firstRow.y + firstRow.height <= 844,
        `the first log is in the first screen: ${JSON.stringify(firstRow)}`,
      );
      const fold = page.getByRole('button', { name: 'Filters', exact: true });
      assert.equal(await fold.getAttribute('aria-expanded'), 'false');
      for (const hidden of ['Export…', 'Live', 'Copy as cURL']) {
        assert.equal(
          await page.getByRole('button', { name: hidden, exact: true }).isVisible(),
          false,
          `${hidden} is folded`,
        );
      }
      assert.equal(await page.getByLabel('Filters as text').isVisible(), false);
      assert.equal(await page.getByRole('figure', { name: 'Requests and errors over time' }).isVisible(), false);
      await fold.click();
      assert.equal(await fold.getAttribute('aria-expanded'), 'true');
      for (const name of ['Export…', 'Create dataset…', 'Copy as cURL']) {
        await inView(page.getByRole('button', { name, exact: true }), width, `the ${name} button`);
      }
      await inView(page.getByLabel('Filters as text'), width, 'the filters as text');
      await inView(page.getByRole('figure', { name: 'Requests and errors over time' }), width, 'the chart strip');
      await fold.click();
      // A card per log: model, status, cost and time all in view, readable (not a squeezed column).
      const card = rows(page).first();
      await inView(card, width, 'the first card');
      for (const cell of ['c-model', 'c-status', 'c-cost', 'c-time', 'c-latency']) {
        const located = card.locator(`td.${cell}`);
        await inView(located, width, `the card's ${cell}`);
        assert.ok(((await located.boundingBox())?.width ?? 0) >= 40, `${cell} has room to be read`);
      }
      assert.match(await card.locator('td.c-model').innerText(), /^gpt-4o|^text-embedding/);
      assert.match(await card.locator('td.c-cost').innerText(), /^\$/);
      assert.equal(await card.locator('td.c-cost').evaluate((el) => el.scrollWidth > el.clientWidth), false);
      // The theme switch works from the phone's header too; the panel fits the screen.
      await rows(page).first().click();
      const dialog = page.getByRole('dialog', { name: 'Log detail' });
      await dialog
        .getByText(/answer 59/)
        .first()
        .waitFor();
      await inView(dialog, width, 'the log detail panel');
      await noSidewaysScroll(page, `390 px ${theme} with a log open`);
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      await page.screenshot({ path: screenshotPath(`explorer-phone-${theme}.png`), fullPage: true });
      await page.close();
    });
  }

  it('opens every side panel with the focus in it, closes it on Esc and gives the focus back', async () => {
    const page = await wideExplorer(session, { width: 1280, height: 900 });
    const focusInDialog = 'document.activeElement?.closest("[role=dialog]")?.getAttribute("aria-label") ?? null';
    const focusedText = 'document.activeElement?.textContent ?? ""';

    await tickBox(rows(page).nth(0).getByRole('checkbox'));
    const panels: [opener: string, dialog: string][] = [
      ['Export…', 'Export logs'],
      ['Create dataset…', 'Create dataset'],
      ['Add 1 to dataset…', 'Add to a dataset'],
    ];
    for (const [opener, name] of panels) {
      await page.getByRole('button', { name: opener }).click();
      const dialog = page.getByRole('dialog', { name });
      await dialog.waitFor();
      await settles(page, focusInDialog, name, `${name}: the focus is in the panel`);
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      await settles(page, focusedText, opener, `${name}: the focus is back on ${opener}`);
    }

    // The export panel's choices sit beside their labels, on one line each.
    await page.getByRole('button', { name: 'Export…' }).click();
    const exportDialog = page.getByRole('dialog', { name: 'Export logs' });
    for (const label of ['CSV of the columns shown', 'JSON Lines of every field']) {
      const radio = exportDialog.getByRole('radio', { name: label });
      const box = (await radio.boundingBox())!;
      const labelBox = (await exportDialog.locator('label').filter({ hasText: label }).boundingBox())!;
      assert.ok(labelBox.height < box.height * 2.5, `${label}: one line (${labelBox.height} px high)`);
      assert.ok(labelBox.width > box.width * 4, `${label}: the text is beside the radio`);
    }
    // The close button closes it too, and the focus goes back all the same.
    await exportDialog.getByRole('button', { name: 'Close' }).click();
    await exportDialog.waitFor({ state: 'detached' });
    await settles(page, focusedText, 'Export…', 'the focus is back on Export…');

    // The log detail: opened from a row with Enter, closed with Esc, the focus back on the row.
    await rows(page).nth(2).focus();
    await page.keyboard.press('Enter');
    const detail = page.getByRole('dialog', { name: 'Log detail' });
    await detail.waitFor();
    await settles(page, focusInDialog, 'Log detail', 'the focus is in the log detail');
    await page.keyboard.press('Escape');
    await detail.waitFor({ state: 'detached' });
    await settles(
      page,
      'document.activeElement?.getAttribute("data-log-id")',
      await rows(page).nth(2).getAttribute('data-log-id'),
      'the focus is back on the row',
    );
    await page.close();
  });

  it('ran without a script error', () => {
    // The failed calls the explorer's filter and outage tests expect are let through here too.
    assert.deepEqual(session.problemsExcept(EXPECTED_FAILED_CALLS), []);
  });
});
