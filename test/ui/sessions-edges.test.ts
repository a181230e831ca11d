/**
 * The web UI's Sessions page at its edges, in a real browser (Debian's Chromium through playwright-core):
 * a page the sessions no longer reach (a link kept while they changed) says so and leads back to them;
 * a session longer than a page of the timeline shows its next calls on demand, oldest first, and a page
 * of calls that could not be listed is said so, and tried again; "Show every call of the session" drops a
 * URL quick filter too; a link's name read as a metadata key is shown so, as in the explorer.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { withoutChromium } from '../support/chromium.js';
import { browserSession } from '../support/browser-session.js';

const SECOND = 1000;
/** More calls than a page of the timeline holds (its page is 100). */
const LONG = 105;

/** A call of a session through the logging API, `ago` seconds before the suite's start. */
function call(now: number, thread: string, ago: number, n: number) {
  return {
    thread_identifier: thread,
    model: 'gpt-4o-mini',
    input: [{ role: 'user', content: `step ${n}` }],
    output: { role: 'assistant', content: `done ${n}` },
    usage: { prompt_tokens: 10, completion_tokens: 2 },
    cost: 0.001,
    latency: 1,
    timestamp: new Date(now - ago * SECOND).toISOString(),
  };
}

describe('web UI sessions at their edges in Chromium', { skip: withoutChromium }, () => {
  const now = Date.now();
  const session = browserSession({
    seed: async (s) => {
      // The long run: call 1 the oldest, a second apart.
      await s.seedLogs(Array.from({ length: LONG }, (_, i) => call(now, 'long-run', 600 - i, i + 1)));
      await s.seedLogs([call(now, 'short-a', 30, 1), call(now, 'short-b', 20, 1)]);
    },
  });

  const signedIn = (query: string) =>
    session.signedIn(query, {
      viewport: { width: 1280, height: 900 },
      ready: (page) => page.getByRole('link', { name: 'Sessions', exact: true }),
    });
  const summary = (page: Page, text: string) => page.locator('.summary').getByText(text, { exact: true }).waitFor();
  const query = (page: Page) => new URL(page.url()).searchParams;

  it('says a page past the last is past it, and leads back to the last page', async () => {
    const page = await signedIn('?v=sessions&range=24h&page=9');
    await page.locator('p.summary').filter({ hasText: 'Page 9 is past the last page: 3 sessions in all.' }).waitFor();
    await page.getByRole('button', { name: 'Show the last page' }).click();
    await summary(page, '1–3 of 3 sessions');
    assert.equal(query(page).get('page'), null, 'the first page, the only one');
    await page.close();
  });

  it('shows a long session’s next calls on demand, and says when they could not be listed', async () => {
    const page = await signedIn('?v=sessions&range=24h&session=long-run');
    const calls = page.getByRole('list', { name: 'Calls' }).getByRole('listitem', { name: /^Call \d+$/ });
    await page.getByRole('listitem', { name: 'Call 100' }).waitFor();
    assert.equal(await calls.count(), 100);
    await page.locator('.timeline-more .summary').getByText(`100 of ${LONG} calls shown.`).waitFor();

    // The next page of calls fails once, as a list past its time budget does.
    let refused = 0;
    await page.route('**/api/request-logs/list/**', async (route) => {
      if (refused === 0 && new URL(route.request().url()).searchParams.get('page') === '2') {
        refused++;
        await route.fulfill({
          status: 503,
          contentType: 'application/json',
          body: JSON.stringify({
            error: { code: 'query_timeout', message: 'The query took longer than its budget.', param: null },
          }),
        });
        return;
      }
      await route.continue();
    });
    const next = page.getByRole('button', { name: 'Show the next calls' });
    await next.click();
    await page
      .getByRole('alert')
      .getByText('The next calls could not be listed: The query took longer than its budget.')
      .waitFor();
    assert.equal(await calls.count(), 100, 'nothing added');

    // Tried again, the rest come, oldest first, and there is nothing more to show.
    await next.click();
    await page.getByRole('listitem', { name: `Call ${LONG}` }).waitFor();
    assert.equal(await calls.count(), LONG);
    await page.getByRole('listitem', { name: 'Call 101' }).getByText('done 101').waitFor();
    assert.equal(await next.count(), 0);
    assert.equal(await page.getByRole('alert').count(), 0, 'the failure is no longer said');
    await page.close();
  });

  it('shows every call of a session filtered by a URL quick filter, the filter dropped', async () => {
    const page = await signedIn('?v=sessions&range=24h&session=short-a&model=gpt-4o-mini');
    await page.getByRole('listitem', { name: 'Call 1' }).waitFor();
    const every = page.getByRole('button', { name: 'Show every call of the session' });
    await every.click();
    await every.waitFor({ state: 'detached' });
    assert.equal(query(page).get('model'), null, 'the quick filter is gone from the URL');
    assert.equal(query(page).get('session'), 'short-a');
    await page.getByRole('listitem', { name: 'Call 1' }).waitFor();
    await page.close();
  });

  it('shows a link’s name read as metadata as the explorer does, and takes the field meant', async () => {
    const page = await signedIn('?v=sessions&range=24h&modle=gpt-4o-mini');
    await summary(page, 'No session matches these filters in this time window.');
    await page.getByText('metadata.modle is gpt-4o-mini').waitFor();
    await page.getByRole('button', { name: 'did you mean model?' }).click();
    await summary(page, '1–3 of 3 sessions');
    assert.equal(query(page).get('model'), 'gpt-4o-mini');
    await page.close();
  });

  it('met no script error on the way but the refused page', () => {
    assert.deepEqual(session.problemsExcept(/503/), []);
  });
});
