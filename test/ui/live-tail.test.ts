/**
 * The explorer's live tail in Chromium (GET /api/request-logs/stream/, read with fetch since the UI
 * authenticates with a header): with Live on, a new log arrives above the rows; with a log open it waits
 * behind a "N new logs" pill instead, which shows it when clicked.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withoutChromium } from '../support/chromium.js';
import { browserSession, logsGrid, openAndWait } from '../support/browser-session.js';

describe('live tail in the explorer', { skip: withoutChromium }, () => {
  const session = browserSession({
    seed: async (s) => {
      await s.seedLogs(
        [1, 2, 3].map((i) => ({ model: `old-${i}`, timestamp: new Date(Date.now() - i * 60_000).toISOString() })),
      );
    },
  });

  const create = async (model: string) => {
    const res = await session.api('POST', '/api/request-logs/create/', { body: { model } });
    assert.equal(res.status, 201);
    await session.t.flush();
  };

  it('puts new logs above the rows, or behind a pill while a log is open', async () => {
    const page = await session.signedIn('', { ready: '1–3 of 3 logs' });
    const opened = page.waitForResponse((r) => r.url().includes('/api/request-logs/stream/'));
    await page.getByRole('button', { name: 'Live' }).click();
    assert.equal((await opened).status(), 200);
    assert.equal(await page.getByRole('button', { name: /Live/ }).getAttribute('aria-pressed'), 'true');
    const rows = logsGrid(page).locator('tbody tr[data-log-id]');

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

    // Off: the stream is closed, and no more logs arrive.
    const closed = page.waitForEvent('requestfailed', (r) => r.url().includes('/api/request-logs/stream/'));
    await page.getByRole('button', { name: /Live/ }).click();
    await closed;
    await create('live-3');
    assert.match(await rows.first().innerText(), /live-2/);
    await page.close();
  });

  it('offers Live only for filters the stream takes (equality and not)', async () => {
    const page = await session.signedIn('', { ready: logsGrid });
    const filters = JSON.stringify([{ field: 'cost', operator: 'gte', values: [0] }]);
    await openAndWait(page, session.ui(`?filters=${encodeURIComponent(filters)}`), (p) =>
      p.getByRole('button', { name: /^Remove filter cost/ }),
    );
    const liveButton = page.getByRole('button', { name: 'Live' });
    assert.equal(await liveButton.isDisabled(), true);
    assert.match((await liveButton.getAttribute('title')) ?? '', /equals, not equals/);
    await page.close();
  });

  it('met no script error or policy violation', () => {
    assert.deepEqual(session.problems, []);
  });
});
