/** The web UI opened in Chromium as a user does: the page at a path, signed in with an API key. */
import type { Browser, Page } from 'playwright-core';

/** A new page at `${baseUrl}${path}` (the UI, or one of its links), signed in with `key`. */
export async function openSignedIn(browser: Browser, baseUrl: string, key: string, path = '/ui/'): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${baseUrl}${path}`);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  return page;
}
