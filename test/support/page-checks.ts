/**
 * Waits and reads on a web UI page the browser tests share. The UI's Content-Security-Policy forbids
 * eval, so a condition read in the page is polled with page.evaluate (waitForFunction's strings would
 * be eval).
 */
import assert from 'node:assert/strict';
import type { Locator, Page } from 'playwright-core';
import { poll } from './poll.js';

/** Reads `expression` in the page until it is true, for 5 s. */
export async function holds(page: Page, expression: string, what: string): Promise<void> {
  if (!(await poll(async () => Boolean(await page.evaluate(expression))))) {
    assert.fail(`${what}: ${expression} never held`);
  }
}

/** Reads `expression` in the page until it gives `expected` (a focus moves in an effect), for 5 s. */
export async function settles(page: Page, expression: string, expected: unknown, what: string): Promise<void> {
  let value: unknown;
  await poll(async () => (value = await page.evaluate(expression)) === expected);
  assert.equal(value, expected, what);
}

/** The document's width and the window's: wider is a page that scrolls sideways. */
export async function documentWidths(page: Page): Promise<{ scroll: number; client: number }> {
  return (await page.evaluate(
    '({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })',
  )) as { scroll: number; client: number };
}

/** The texts of what `items` matches once the first is drawn, white space folded to single spaces and trimmed. */
export async function foldedTexts(items: Locator): Promise<string[]> {
  await items.first().waitFor();
  return (await items.allInnerTexts()).map((text) => text.replace(/\s+/g, ' ').trim());
}

/** The index of the column headed `name` in a table or grid (its header's text, trimmed). */
export async function columnIndex(table: Locator, name: string): Promise<number> {
  const headers = (await table.locator('thead th').allInnerTexts()).map((h) => h.trim());
  const at = headers.indexOf(name);
  assert.ok(at >= 0, `a ${name} column among ${headers.join(', ')}`);
  return at;
}

/** Each body row's text in the column headed `name`, top to bottom. */
export async function columnTexts(table: Locator, name: string): Promise<string[]> {
  const at = await columnIndex(table, name);
  const rows = table.locator('tbody tr');
  const cells: string[] = [];
  for (let i = 0; i < (await rows.count()); i++)
    cells.push((await rows.nth(i).locator('td').nth(at).innerText()).trim());
  return cells;
}
