/**
 * The web UI's Keys page in a real browser (Debian's Chromium through playwright-core) against a real
 * gatelog and its database: a key made with its scopes, models and expiry, its secret shown once
 * and copied, the key working against the API; its scopes changed (only they sent); rotated with a grace
 * period (the new secret shown once, the old one still working); revoked after asking (then refused,
 * dimmed, hidden on demand); a refusal of the API shown next to its field; a key made with a rate limit,
 * shown in the table and edited away (a limit that is not a whole number said before anything is sent); a
 * key without admin told plainly which scope the page needs.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { watchedPage, withoutChromium } from '../support/chromium.js';
import { browserSession, screenshotPath } from '../support/browser-session.js';
import { columnIndex, documentWidths, foldedTexts } from '../support/page-checks.js';

describe('web UI keys in Chromium', { skip: withoutChromium }, () => {
  const session = browserSession();
  /** The key the tests make, and its secret as last shown. */
  const made = { id: '', secret: '', oldSecret: '' };

  /** A page on the Keys screen, with a clipboard it may write and read. */
  const keysPage = async (key?: string): Promise<Page> => {
    const page = await watchedPage(session.browser, session.problems, {
      viewport: { width: 1280, height: 900 },
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    await session.signIn(page, '?v=keys', { key, ready: (p) => p.getByRole('heading', { name: 'Keys' }) });
    return page;
  };
  const current = (secret: string) => session.api('GET', '/api/keys/current/', { key: secret });
  const rowOf = (page: Page, id: string) =>
    page.getByRole('table', { name: 'Keys' }).locator(`tr[data-key-id="${id}"]`);
  /** The secret in its dialog: copied with the button, which then says so; what the clipboard holds. */
  const copySecret = async (page: Page, dialog: string): Promise<string> => {
    const panel = page.getByRole('dialog', { name: dialog });
    const secret = await panel.getByLabel(/^Secret of/).inputValue();
    assert.match(await panel.getByRole('note').innerText(), /will not be shown again/);
    await panel.getByRole('button', { name: 'Copy' }).click();
    await panel.getByRole('button', { name: 'Copied' }).waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), secret, 'the clipboard holds the secret');
    await page.screenshot({ path: screenshotPath(`keys-secret-${dialog.replace(/\W+/g, '-').toLowerCase()}.png`) });
    await panel.getByRole('button', { name: 'Done' }).click();
    await panel.waitFor({ state: 'detached' });
    assert.ok(!(await page.content()).includes(secret), 'the secret is gone from the page once closed');
    return secret;
  };

  it('makes a key with scopes, models and an expiry; shows its secret once, copied; the key works', async () => {
    const page = await keysPage();
    const form = page.getByRole('form', { name: 'Create a key' });
    const admin = form.getByRole('checkbox', { name: 'admin', exact: true });
    // A test key never holds admin: ticking it takes admin away and bars it.
    await form.getByRole('checkbox', { name: 'Test key' }).check();
    assert.equal(await admin.isDisabled(), true);
    assert.equal(await admin.isChecked(), false);
    await form.getByRole('checkbox', { name: 'Test key' }).uncheck();
    assert.equal(await admin.isDisabled(), false);

    await form.getByLabel('Name').fill('ci-reader');
    await form.getByLabel('Owner email (optional)').fill('ci@acme.test');
    await form.getByRole('checkbox', { name: 'ingest', exact: true }).uncheck();
    await admin.uncheck();
    await form.getByLabel('Allowed models (optional)').fill('gpt-4o\nclaude-*');
    const expires = form.getByLabel('Expires (optional)');
    // An expiry in the past, which the API refuses: its message next to the field, the field marked.
    await expires.fill('2001-01-02T03:04');
    await form.getByRole('button', { name: 'Create key' }).click();
    const expiresError = form.locator('[id="new-key-expires_at-error"]');
    await expiresError.waitFor();
    assert.match(await expiresError.innerText(), /expires_at/);
    assert.equal(await expires.getAttribute('aria-invalid'), 'true');
    assert.equal(await page.getByRole('dialog').count(), 0, 'nothing made');

    await expires.fill('2030-01-02T03:04');
    await form.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('dialog', { name: 'New key' }).waitFor();
    assert.equal(await expiresError.count(), 0);
    made.secret = await copySecret(page, 'New key');
    assert.match(made.secret, /^gl_live_/);
    assert.equal(await form.getByLabel('Name').inputValue(), '', 'the form is empty again');

    const me = await current(made.secret);
    assert.equal(me.status, 200, me.text);
    made.id = me.body.id;
    const expiry = await page.evaluate("new Date('2030-01-02T03:04').toISOString()");
    assert.deepEqual(
      [me.body.name, me.body.owner.email, me.body.scopes, me.body.allowed_models],
      ['ci-reader', 'ci@acme.test', ['models', 'read'], ['gpt-4o', 'claude-*']],
    );
    assert.equal(Date.parse(me.body.expires_at), Date.parse(expiry as string));

    // Listed, newest made first when asked; used just now (the call above).
    await page.getByLabel('Order').selectOption('created');
    await page.waitForURL(/sort=created/);
    await page.reload();
    const row = rowOf(page, made.id);
    await row.waitFor();
    const cells = await foldedTexts(row.locator('td'));
    assert.match(cells[0], /^ci-reader$/);
    assert.match(cells[1], /^gl_live_\S+…$/);
    assert.deepEqual(cells.slice(2, 5), ['ci@acme.test', 'models, read', 'gpt-4o, claude-*']);
    assert.match(cells[5], /2030/, 'the expiry');
    assert.deepEqual([cells[7], cells[8]], ['just now', 'Active']);
    const firstRow = page.getByRole('table', { name: 'Keys' }).locator('tbody tr').first();
    assert.equal(await firstRow.getAttribute('data-key-id'), made.id, 'the newest key first');
    await page.close();
  });

  it("edits the key's scopes, sending only them", async () => {
    const page = await keysPage();
    const patches: unknown[] = [];
    page.on('request', (r) => {
      if (r.method() === 'PATCH') patches.push(r.postDataJSON());
    });
    await rowOf(page, made.id).getByRole('button', { name: 'Edit key ci-reader' }).click();
    const form = page.getByRole('form', { name: 'Edit key ci-reader' });
    assert.equal(await form.getByRole('checkbox', { name: 'Test key' }).count(), 0, 'a key stays what it is');
    assert.equal(await form.getByLabel('Allowed models (optional)').inputValue(), 'gpt-4o\nclaude-*');
    await form.getByRole('checkbox', { name: 'ingest', exact: true }).check();
    await form.getByRole('button', { name: 'Save key' }).click();
    await form.waitFor({ state: 'detached' });
    await rowOf(page, made.id).getByText('models, ingest, read').waitFor();
    assert.deepEqual(patches, [{ scopes: ['models', 'ingest', 'read'] }]);
    assert.deepEqual((await current(made.secret)).body.scopes, ['models', 'ingest', 'read']);
    await page.close();
  });

  it('rotates the key with a grace period: the new secret shown once, the old one still working', async () => {
    const page = await keysPage();
    await rowOf(page, made.id).getByRole('button', { name: 'Rotate key ci-reader' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rotate key ci-reader' });
    await dialog.getByRole('radio', { name: '1 hour' }).check();
    await dialog.getByRole('button', { name: 'Rotate key' }).click();
    await dialog.getByText('The old secret keeps working for the grace period.').waitFor();
    made.oldSecret = made.secret;
    made.secret = await copySecret(page, 'Rotate key ci-reader');
    assert.notEqual(made.secret, made.oldSecret);
    assert.equal((await current(made.secret)).body.id, made.id, 'the new secret is the same key');
    assert.equal((await current(made.oldSecret)).status, 200, 'the old secret works within its grace');
    await page.close();
  });

  it('revokes the key after asking: it is refused, shown revoked, and hidden on demand', async () => {
    const page = await keysPage();
    const row = rowOf(page, made.id);
    await row.getByRole('button', { name: 'Revoke key ci-reader' }).click();
    await row.getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await current(made.secret)).status, 200, 'cancelled: still working');
    await row.getByRole('button', { name: 'Revoke key ci-reader' }).click();
    await row.getByRole('button', { name: 'Revoke ci-reader' }).click();
    await row.getByText('Revoked').waitFor();
    assert.equal(await row.getAttribute('class'), 'key-revoked');
    assert.equal(await row.getByRole('button').count(), 0, 'nothing more to do with it');
    assert.equal((await current(made.secret)).status, 401);
    assert.equal((await current(made.oldSecret)).status, 401, 'its grace ends with it');

    for (const theme of ['light', 'dark']) {
      await page.getByLabel('Theme').selectOption(theme);
      await page.screenshot({ path: screenshotPath(`keys-${theme}.png`), fullPage: true });
    }
    await page.getByRole('checkbox', { name: /Show revoked keys \(1\)/ }).uncheck();
    await page.waitForURL(/revoked=hide/);
    await row.waitFor({ state: 'detached' });
    await page.reload();
    await page.getByRole('table', { name: 'Keys' }).waitFor();
    assert.equal(await row.count(), 0, 'still hidden after a reload');
    assert.equal(await page.getByRole('checkbox', { name: /Show revoked keys/ }).isChecked(), false);
    await page.close();
  });

  it('makes a key with a rate limit, shows it in the table, and edits it away', async () => {
    const page = await keysPage();
    const sent: { method: string; body: unknown }[] = [];
    page.on('request', (r) => {
      if (['POST', 'PATCH'].includes(r.method()) && r.url().includes('/api/keys/')) {
        sent.push({ method: r.method(), body: r.postDataJSON() });
      }
    });
    const form = page.getByRole('form', { name: 'Create a key' });
    await form.getByLabel('Name').fill('limited');
    const rpm = form.getByLabel('Requests per minute (optional)');
    const tpm = form.getByLabel('Tokens per minute (optional)');
    assert.deepEqual([await rpm.inputValue(), await tpm.inputValue()], ['', ''], 'nothing pre-filled');
    const hint = await rpm.getAttribute('aria-describedby');
    assert.match(
      await form.locator(`[id="${hint}"]`).innerText(),
      /Both empty: the limits of the key you are signed in/,
    );

    // Not a whole number: said next to the field, the field marked, nothing sent.
    await rpm.fill('1.5');
    await form.getByRole('button', { name: 'Create key' }).click();
    const rpmError = form.locator('[id="new-key-rate_limits.requests_per_minute-error"]');
    await rpmError.waitFor();
    assert.match(await rpmError.innerText(), /Requests per minute: Give a whole number/);
    assert.equal(await rpm.getAttribute('aria-invalid'), 'true');
    assert.equal(await tpm.getAttribute('aria-invalid'), null, 'only the field at fault');
    assert.equal(sent.length, 0, 'nothing sent');

    await rpm.fill('60');
    await form.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('dialog', { name: 'New key' }).waitFor();
    assert.equal(await rpmError.count(), 0);
    const secret = await copySecret(page, 'New key');
    assert.deepEqual(
      sent.map((s) => (s.body as { rate_limits?: unknown }).rate_limits),
      [{ requests_per_minute: 60 }],
      'only the limit typed',
    );
    const me = await current(secret);
    assert.deepEqual(me.body.rate_limits, { requests_per_minute: 60, tokens_per_minute: null });

    const table = page.getByRole('table', { name: 'Keys' });
    const limits = rowOf(page, me.body.id)
      .locator('td')
      .nth(await columnIndex(table, 'Limits'));
    await limits.getByText('60 rpm').waitFor();
    assert.equal(await limits.getAttribute('title'), 'At most 60 requests a minute');

    await rowOf(page, me.body.id).getByRole('button', { name: 'Edit key limited' }).click();
    const edit = page.getByRole('form', { name: 'Edit key limited' });
    const editRpm = edit.getByLabel('Requests per minute (optional)');
    assert.equal(await editRpm.inputValue(), '60', 'the limit as it is');
    await editRpm.fill('');
    await edit.getByRole('button', { name: 'Save key' }).click();
    await edit.waitFor({ state: 'detached' });
    await limits.getByText('—').waitFor();
    assert.deepEqual(sent.at(-1), {
      method: 'PATCH',
      body: { rate_limits: { requests_per_minute: null, tokens_per_minute: null } },
    });
    assert.deepEqual((await current(secret)).body.rate_limits, { requests_per_minute: null, tokens_per_minute: null });
    await page.screenshot({ path: screenshotPath('keys-limits.png'), fullPage: true });
    await page.close();
  });

  it('tells a key without admin which scope the page needs, and marks the pages it cannot use', async () => {
    const reader = await session.api('POST', '/api/keys/', { body: { name: 'reader-only', scopes: ['read'] } });
    assert.equal(reader.status, 201, reader.text);
    const page = await keysPage(reader.body.key);
    const note = page.getByRole('note');
    await note.waitFor();
    assert.match(
      await note.innerText(),
      /needs a key with the admin scope\. The key you signed in with \(reader-only\)/,
    );
    assert.equal(await page.getByRole('table').count(), 0);
    assert.equal(await page.getByRole('alert').count(), 0, 'no error: an explanation');
    await page.getByRole('link', { name: 'Keys (needs admin)' }).waitFor();
    await page.getByRole('link', { name: 'Settings (needs admin)' }).click();
    await page.getByRole('heading', { name: 'Settings' }).waitFor();
    assert.match(await page.getByRole('note').innerText(), /Settings page needs a key with the admin scope/);
    await page.screenshot({ path: screenshotPath('keys-without-admin.png'), fullPage: true });
    await page.close();
  });

  it('fits the keys on a phone: no sideways scrolling, each key a card', async () => {
    const page = await session.signedIn('?v=keys', {
      viewport: { width: 390, height: 844 },
      ready: (p) => p.getByRole('table', { name: 'Keys' }),
    });
    const { scroll, client } = await documentWidths(page);
    assert.ok(scroll <= client, `the page scrolls sideways by ${scroll - client} px`);
    const box = await page.getByRole('table', { name: 'Keys' }).locator('tbody tr').first().boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= 390, 'a key fits the screen');
    await page.screenshot({ path: screenshotPath('keys-phone.png'), fullPage: true });
    await page.close();
  });

  it('ran without a script error or a Content-Security-Policy violation', () => {
    // The API's refusal the form shows (400) is a failed call the browser reports on its console.
    assert.deepEqual(session.problemsExcept(/status of 400/), []);
  });
});
