/**
 * The web UI's retention settings in a real browser (Debian's Chromium through playwright-core) against
 * a real gatelog and its database: the organization's retention and content retention typed in days,
 * saved (only what changed) and read back from the API; blank taking the server's setting (null), 0
 * kept as 0; a value the API would refuse refused next to its field, nothing saved. With the pure
 * piece behind them: reading a typed number of days.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_RETENTION_DAYS as API_MAX } from '../../src/org-settings/settings.js';
import { MAX_RETENTION_DAYS, retentionDays, retentionText } from '../../ui/src/lib/retention-days.js';
import { withoutChromium } from '../support/chromium.js';
import { browserSession, screenshotPath, settingsLink } from '../support/browser-session.js';

describe('web UI retention days', () => {
  it('reads whole days, blank as the server’s setting, and refuses what the API would', () => {
    assert.equal(MAX_RETENTION_DAYS, API_MAX, 'the UI allows what the API allows');
    assert.deepEqual(retentionDays(''), { days: null });
    assert.deepEqual(retentionDays('  '), { days: null });
    assert.deepEqual(retentionDays(' 30 '), { days: 30 });
    assert.deepEqual(retentionDays('0'), { days: 0 });
    assert.deepEqual(retentionDays(String(API_MAX)), { days: API_MAX });
    for (const [text, problem] of [
      ['1.5', /whole number/],
      ['-1', /whole number of days, or leave it blank/],
      ['thirty', /whole number of days, or leave it blank/],
      ['1e3', /whole number of days, or leave it blank/],
      [String(API_MAX + 1), /At most 36500 days/],
    ] as const) {
      const read = retentionDays(text);
      assert.ok('problem' in read, `${text} is refused`);
      assert.match(read.problem, problem);
    }
    assert.equal(retentionText(null), '');
    assert.equal(retentionText(0), '0');
  });
});

describe('web UI retention settings in Chromium', { skip: withoutChromium }, () => {
  const session = browserSession();

  const signedIn = (query = '') =>
    session.signedIn(query, { viewport: { width: 1280, height: 900 }, ready: settingsLink });

  const settings = async () => {
    const res = await session.api('GET', '/api/settings/');
    assert.equal(res.status, 200, res.text);
    return res.body as { retention_days: number | null; content_retention_days: number | null; cache_ttl: number };
  };

  it('saves the retention typed in days, blank as the server’s setting, and shows what is saved', async () => {
    const page = await signedIn('?v=settings');
    const form = page.getByRole('form', { name: 'Retention settings' });
    const retention = form.getByLabel('Delete logs after (days)');
    const content = form.getByLabel('Clear what was said after (days)');
    await retention.waitFor();
    assert.equal(await retention.inputValue(), '', 'the server’s setting: blank');
    assert.equal(await content.inputValue(), '');
    const cacheTtl = (await settings()).cache_ttl;

    /** Saves the form; the PATCH body it sent. */
    const save = async () => {
      const sent = page.waitForRequest((r) => r.method() === 'PATCH' && r.url().endsWith('/api/settings/'));
      await form.getByRole('button', { name: 'Save retention' }).click();
      return JSON.parse((await sent).postData() ?? 'null') as unknown;
    };
    await retention.fill('30');
    await content.fill('7');
    assert.deepEqual(await save(), { retention_days: 30, content_retention_days: 7 }, 'only what changed is sent');
    const status = form.getByRole('status');
    await status.waitFor();
    assert.equal((await status.innerText()).trim(), 'Saved: logs are kept 30 days, what was said 7 days.');
    let saved = await settings();
    assert.deepEqual([saved.retention_days, saved.content_retention_days], [30, 7]);
    assert.equal(saved.cache_ttl, cacheTtl);

    // Read back after a reload: the form shows what is saved.
    await page.reload();
    await retention.waitFor();
    assert.equal(await retention.inputValue(), '30');
    assert.equal(await content.inputValue(), '7');

    // Blank goes back to the server's setting; 0 keeps the content as long as the log.
    await retention.fill('');
    await content.fill('0');
    assert.deepEqual(await save(), { retention_days: null, content_retention_days: 0 });
    await form.getByRole('status').filter({ hasText: 'server’s setting' }).waitFor();
    assert.equal(
      (await form.getByRole('status').innerText()).trim(),
      'Saved: logs are kept as the server’s setting says, what was said as long as its log.',
    );
    saved = await settings();
    assert.deepEqual([saved.retention_days, saved.content_retention_days], [null, 0]);

    // Saving again without a change sends nothing.
    let patched = false;
    page.on('request', (r) => {
      if (r.method() === 'PATCH') patched = true;
    });
    await form.getByRole('button', { name: 'Save retention' }).click();
    await form.getByRole('status').filter({ hasText: 'Nothing changed.' }).waitFor();
    assert.equal(patched, false);
    await page.close();
  });

  it('refuses a value the API would refuse next to its field, and saves nothing', async () => {
    const page = await signedIn('?v=settings');
    const form = page.getByRole('form', { name: 'Retention settings' });
    const retention = form.getByLabel('Delete logs after (days)');
    await retention.waitFor();
    const before = await settings();
    await retention.fill('1.5');
    await form.getByRole('button', { name: 'Save retention' }).click();
    const alert = form.getByRole('alert');
    await alert.waitFor();
    assert.match(await alert.innerText(), /retention_days: Give a whole number of days/);
    assert.equal(await retention.getAttribute('aria-invalid'), 'true');
    assert.deepEqual(await settings(), before);

    await retention.fill('40000');
    await form.getByRole('button', { name: 'Save retention' }).click();
    await form.getByRole('alert').filter({ hasText: 'At most 36500 days' }).waitFor();
    assert.deepEqual(await settings(), before);

    for (const theme of ['light', 'dark']) {
      await page.getByLabel('Theme').selectOption(theme);
      await page.screenshot({ path: screenshotPath(`settings-retention-${theme}.png`), fullPage: true });
    }
    await page.close();
  });

  it('ran without a script error or a Content-Security-Policy violation', () => {
    assert.deepEqual(session.problems, []);
  });
});
