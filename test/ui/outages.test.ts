/**
 * gatelog going away and coming back, in a real browser (Debian's Chromium through playwright-core): the
 * explorer keeps its table, says gatelog is not answering (with only Live on too), and clears once it
 * answers again. The browser reaches gatelog through a door that can be shut. Screenshots go to
 * GATELOG_UI_SCREENSHOTS (default: a temporary directory).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { describe, it } from 'node:test';
import { type Page } from 'playwright-core';
import { withoutChromium } from '../support/chromium.js';
import { browserSession, logsGrid, screenshotPath, servedApp } from '../support/browser-session.js';
import { EXPECTED_FAILED_CALLS, wideExplorer, wideLogs } from '../support/wide-explorer.js';

/**
 * A plain reverse proxy in front of gatelog, on a port of its own, that can be cut off and put back on
 * the same port: to the browser, gatelog stops answering and then answers again, as when it restarts.
 */
class Door {
  private server = http.createServer((req, res) => {
    const upstream = http.request(
      new URL(req.url ?? '/', this.target),
      { method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  private sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly target: string) {
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async open(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** Nothing answers on the port any more, and open connections are cut. */
  async shut(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }
}

describe('web UI when gatelog stops answering, in Chromium', { skip: withoutChromium }, () => {
  let door: Door;
  let appClosed = false;
  const session = browserSession({
    start: async () => {
      const served = await servedApp();
      door = new Door(served.t.baseUrl);
      await door.open();
      return {
        ...served,
        browserUrl: () => door.url,
        close: async () => {
          await door.shut().catch(() => {});
          // A test stops gatelog itself: its database is left to drop.
          if (appClosed) await served.t.database.drop();
          else await served.close();
        },
      };
    },
    seed: (s) => s.seedLogs(wideLogs(Date.now())),
  });

  const rows = (page: Page) => logsGrid(page).locator('tbody tr');

  it('says so when gatelog stops answering with only Live on, and clears when the stream is back', async () => {
    const page = await wideExplorer(session, { width: 1280, height: 900 });
    const streamed = page.waitForResponse((res) => res.url().includes('/request-logs/stream/'));
    await page.getByRole('button', { name: 'Live', exact: true }).click();
    await page.getByRole('button', { name: '● Live' }).waitFor();
    assert.equal((await streamed).status(), 200);
    // Nothing but the stream is open: the door shut cuts it, and nothing else is asked.
    await door.shut();
    const banner = page.getByRole('status').filter({ hasText: 'gatelog is not answering' });
    await banner.waitFor();
    assert.equal(await rows(page).count(), 50, 'the rows are still there');
    await door.open();
    await banner.waitFor({ state: 'detached', timeout: 20_000 });
    await page.close();
  });

  it('keeps the table when gatelog stops answering, says so, and clears once it answers again', async () => {
    const page = await wideExplorer(session, { width: 1280, height: 900 });
    await door.shut();
    await page.getByRole('button', { name: 'Refresh' }).click();
    const banner = page.getByRole('status').filter({ hasText: 'gatelog is not answering — retrying' });
    await banner.waitFor();
    assert.equal(await rows(page).count(), 50, 'the rows are still there');
    assert.equal(await page.getByText(/Failed to fetch/).count(), 0);
    assert.equal(await page.getByText(/could not be listed/).count(), 0);
    await page.screenshot({ path: screenshotPath('explorer-gatelog-down.png') });

    // Back on the same address: a retry finds it, the banner goes, the list is current again.
    await door.open();
    await banner.waitFor({ state: 'detached', timeout: 45_000 });
    await page.getByText('1–50 of 60 logs').waitFor();

    // gatelog itself stopped: the same.
    await session.t.app.close();
    appClosed = true;
    await page.getByRole('button', { name: '24h' }).click();
    await banner.waitFor();
    assert.equal(await rows(page).count(), 50, 'the rows are still there');
    await page.close();
  });

  it('ran without a script error', () => {
    // Failed calls are on the console by design here: gatelog gone.
    assert.deepEqual(session.problemsExcept(EXPECTED_FAILED_CALLS), []);
  });
});
