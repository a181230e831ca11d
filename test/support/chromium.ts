/**
 * Debian's Chromium for the web UI's browser tests (through playwright-core). Missing, the UI tests are
 * skipped on a developer machine and fail under CI=true.
 */
import fs from 'node:fs';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';

export const CHROMIUM = process.env.GATELOG_CHROMIUM ?? '/usr/bin/chromium';
const available = fs.existsSync(CHROMIUM);
if (!available && process.env.CI === 'true') throw new Error(`CI=true: the UI tests need Chromium at ${CHROMIUM}`);

/** The `skip` option of a suite that needs Chromium. */
export const withoutChromium: string | false = available ? false : `no Chromium at ${CHROMIUM}`;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

/**
 * A new page whose script errors and console errors (a Content-Security-Policy violation among them)
 * are added to `problems`, which a suite asserts empty at its end.
 */
export async function watchedPage(
  browser: Browser,
  problems: string[],
  options?: Parameters<Browser['newPage']>[0],
): Promise<Page> {
  const page = await browser.newPage(options);
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  return page;
}

/**
 * Ticks a row's checkbox. Once, in CI under load, a click on a row's tick landed while the table was
 * being drawn again and the box stayed empty (playwright-core then throws at once instead of waiting);
 * a second click is what a user would do. Three clicks that do not tick it fail the test.
 */
export async function tickBox(box: Locator): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await box.check();
      return;
    } catch (e) {
      if (attempt >= 3 || !String(e).includes('did not change its state')) throw e;
    }
  }
}
