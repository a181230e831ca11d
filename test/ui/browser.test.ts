/**
 * The web UI in a real browser (Debian's Chromium through playwright-core) against a real gatelog:
 * sign in, the table, a filter, the URL as the state (reload, back), the detail panel and its keys,
 * paging, the dark theme; no Content-Security-Policy violation or script error on the way. Screenshots
 * of the explorer in light and dark go to GATELOG_UI_SCREENSHOTS (default: a temporary directory).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { type Page } from 'playwright-core';
import { tickBox, withoutChromium } from '../support/chromium.js';
import { browserSession, logsGrid, screenshotPath } from '../support/browser-session.js';
import { foldedTexts } from '../support/page-checks.js';
import { hashExportToken } from '../../src/exports/token-repository.js';

describe('web UI in Chromium', { skip: withoutChromium }, () => {
  const session = browserSession({
    seed: async (s) => {
      const now = Date.now();
      await s.seedLogs(
        Array.from({ length: 60 }, (_, i) => ({
          model: i % 3 === 0 ? 'gpt-4o' : 'gpt-4o-mini',
          input: [{ role: 'user', content: `question ${i}` }],
          output: { role: 'assistant', content: `answer ${i}` },
          usage: { prompt_tokens: 10 + i, completion_tokens: 5 },
          customer_identifier: `customer-${i % 4}`,
          status_code: i === 7 ? 500 : 200,
          metadata: { feature: i % 2 === 0 ? 'search' : 'chat' },
          timestamp: new Date(now - (60 - i) * 1000).toISOString(),
        })),
      );
    },
  });

  /** A page signed in with the seeded organization's key, its 60 logs listed. */
  const signedIn = (viewport?: { width: number; height: number }): Promise<Page> =>
    session.signedIn('', { viewport, ready: '1–50 of 60 logs' });

  const rows = (page: Page) => logsGrid(page).locator('tbody tr');

  it('refuses a wrong key with the API message, then signs in and lists the logs', async () => {
    const page = await session.page();
    await page.goto(`${session.t.baseUrl}/ui`);
    assert.equal(new URL(page.url()).pathname, '/ui/', 'redirected to the path with a slash');
    await page.getByLabel('API key').fill('gl_not-a-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    assert.match(await page.getByRole('alert').innerText(), /key/i);
    // A provider's key pasted by mistake: the refusal says what it is and where it goes instead.
    await page.getByLabel('API key').fill('sk-proj-not-a-gatelog-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('this looks like an OpenAI key').waitFor();
    assert.match(await page.getByRole('alert').innerText(), /POST \/api\/provider-keys\//);
    await page.getByLabel('API key').fill(session.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('1–50 of 60 logs').waitFor();
    assert.equal(await rows(page).count(), 50);
    // Newest first: the last log seeded is the first row.
    assert.match(await rows(page).first().innerText(), /answer 59/);
    await page.close();
  });

  it('keeps filters, sort, page and the open log in the URL: reload and back restore them', async () => {
    const page = await signedIn();

    await page.getByLabel('Field').selectOption('model');
    await page.getByLabel('Value').fill('gpt-4o');
    await page.getByRole('button', { name: 'Add filter' }).click();
    await page.getByText('1–20 of 20 logs').waitFor();
    const filtered = new URL(page.url());
    assert.deepEqual(JSON.parse(filtered.searchParams.get('filters')!), [
      { field: 'model', operator: '', values: ['gpt-4o'] },
    ]);
    assert.ok(filtered.searchParams.get('at'), 'the relative window is anchored');

    await page.reload();
    await page.getByText('1–20 of 20 logs').waitFor();
    assert.equal(await page.getByRole('button', { name: /Remove filter model is gpt-4o/ }).count(), 1);

    // Export: all 20 matching logs, as CSV of the columns shown, saved by the browser to disk through a
    // single-use link: the tab reads no body of it (no Response.blob()), and no key travels in a URL.
    await page.evaluate(`(() => {
      window.blobCalls = 0;
      const blob = Response.prototype.blob;
      Response.prototype.blob = function () { window.blobCalls += 1; return blob.call(this); };
    })()`);
    const sent: { url: string; authorization?: string }[] = [];
    page.on('request', (r) => sent.push({ url: r.url(), authorization: r.headers().authorization }));
    await page.getByRole('button', { name: 'Export…' }).click();
    const exportDialog = page.getByRole('dialog', { name: 'Export logs' });
    await exportDialog.getByText('Export 20 logs').waitFor();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      exportDialog.getByRole('button', { name: 'Export' }).click(),
    ]);
    assert.match(download.url(), /\/api\/request-logs\/export\/download\/\?token=[\w-]{43}$/);
    assert.match(download.suggestedFilename(), /^gatelog-logs-\d{4}-\d{2}-\d{2}\.csv$/);
    assert.equal(await page.evaluate('window.blobCalls'), 0, 'the tab never holds the file');
    const made = sent.find((r) => r.url.includes('/api/request-logs/export/tokens/'));
    assert.ok(made?.authorization?.startsWith('Bearer '), 'the link is asked for with the key');
    // The browser's own download (no page request to watch): the server saw the link used.
    const token = new URL(download.url()).searchParams.get('token')!;
    const used = await session.t.db.db
      .selectFrom('export_tokens')
      .select('used_at')
      .where('token_hash', '=', hashExportToken(token))
      .executeTakeFirst();
    assert.ok(used?.used_at, 'the link was followed');
    assert.ok(!sent.some((r) => r.url.includes(session.key)), 'no URL holds the key');
    assert.ok(!sent.some((r) => /\/api\/request-logs\/export\/(\?|$)/.test(r.url)), 'not fetched by the page');
    const csv = fs
      .readFileSync((await download.path())!, 'utf8')
      .trim()
      .split('\r\n');
    assert.equal(csv.length, 21);
    assert.equal(
      csv[0],
      'unique_id,timestamp,status_code,log_type,model,customer_identifier,input,output,transcript,prompt_tokens,completion_tokens,cost,latency',
    );
    assert.ok(csv.slice(1).every((line) => line.includes(',gpt-4o,')));
    await exportDialog.waitFor({ state: 'detached' });

    // The detail panel: opened by a click, j walks to the next log, Esc closes, back reopens.
    await rows(page).first().click();
    const dialog = page.getByRole('dialog', { name: 'Log detail' });
    await dialog.getByText('answer 57').first().waitFor();
    // A chat reads as its messages, the raw JSON folded below them.
    const messages = dialog.getByRole('region', { name: 'Messages' }).locator('li');
    const said = await foldedTexts(messages);
    assert.deepEqual(said, ['USER question 57', 'ASSISTANT answer 57']);
    const first = new URL(page.url()).searchParams.get('log');
    await page.keyboard.press('j');
    await dialog.getByText('answer 54').first().waitFor();
    assert.notEqual(new URL(page.url()).searchParams.get('log'), first);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await page.goBack();
    await dialog.getByText('answer 54').first().waitFor();

    // Filters removed; the copied cURL command lists what the page shows.
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: /Remove filter/ }).click();
    await page.getByText('1–50 of 60 logs').waitFor();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.getByRole('button', { name: 'Copy as cURL' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    const command = String(await page.evaluate('navigator.clipboard.readText()'));
    assert.ok(!command.includes(session.key), 'the key is never copied');
    // Run asynchronously: the server answering it lives in this process.
    const run = promisify(execFile);
    const { stdout } = await run('sh', ['-c', command], { env: { GATELOG_KEY: session.key, PATH: process.env.PATH } });
    const listed = JSON.parse(stdout);
    assert.equal(listed.count, 60);
    assert.equal(listed.results.length, 50);

    // j past the last row of a page opens the first log of the next one; k walks back. (In a window
    // the page fits: scrolled to its end, the next logs would load under it instead.)
    await page.setViewportSize({ width: 1280, height: 2400 });
    await rows(page).last().click();
    await dialog.getByText('answer 10').first().waitFor();
    await page.keyboard.press('j');
    await dialog.getByText('answer 9').first().waitFor();
    assert.equal(new URL(page.url()).searchParams.get('page'), '2');
    await page.keyboard.press('k');
    await dialog.getByText('answer 10').first().waitFor();
    assert.equal(new URL(page.url()).searchParams.get('page'), null);
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText('51–60 of 60 logs').waitFor();
    assert.equal(new URL(page.url()).searchParams.get('page'), '2');
    await page.goBack();
    await page.getByText('1–50 of 60 logs').waitFor();
    await page.close();
  });

  it('filters to or away from a value of the open log, and shows times in UTC when asked', async () => {
    const page = await signedIn();
    await rows(page).first().click();
    const dialog = page.getByRole('dialog', { name: 'Log detail' });
    await dialog.getByRole('button', { name: 'Exclude model gpt-4o-mini' }).click();
    await page.getByText('1–20 of 20 logs').waitFor();
    assert.deepEqual(JSON.parse(new URL(page.url()).searchParams.get('filters')!), [
      { field: 'model', operator: 'not', values: ['gpt-4o-mini'] },
    ]);
    // The open log (the newest, a gpt-4o-mini one) stays open: its metadata value narrows further.
    await dialog.getByRole('button', { name: 'Only metadata__feature chat' }).click();
    await page.getByText(/1–10 of 10 logs/).waitFor();

    // Columns: TTFT shown, Customer hidden; the choice outlives a reload.
    await page.keyboard.press('Escape');
    await page.getByText('Columns', { exact: true }).click();
    await page.getByRole('checkbox', { name: 'TTFT' }).check();
    await page.getByRole('checkbox', { name: 'Customer' }).uncheck();
    const headers = () => page.getByRole('grid', { name: 'Logs' }).locator('thead th').allInnerTexts();
    assert.ok((await headers()).includes('TTFT'));
    assert.ok(!(await headers()).includes('Customer'));
    await page.reload();
    await page.getByText(/1–10 of 10 logs/).waitFor();
    assert.ok((await headers()).includes('TTFT'));
    assert.ok(!(await headers()).includes('Customer'));

    await page.getByLabel('Times').selectOption('utc');
    const cell = rows(page).first().locator('time');
    const iso = (await cell.getAttribute('datetime'))!;
    assert.equal(await cell.innerText(), `${new Date(iso).toISOString().slice(0, 19).replace('T', ' ')} UTC`);
    await page.close();
  });

  it('offers the field meant for a link name read as metadata (?modle=), and filters by it when taken', async () => {
    const page = await signedIn();
    await page.goto(session.ui('?modle=gpt-4o'));
    await page.getByText('metadata.modle is gpt-4o').waitFor();
    await page.getByText('No logs', { exact: false }).first().waitFor();
    await page.getByRole('button', { name: 'did you mean model?' }).click();
    await page.getByText('1–20 of 20 logs').waitFor();
    const url = new URL(page.url());
    assert.equal(url.searchParams.get('model'), 'gpt-4o');
    assert.equal(url.searchParams.get('modle'), null);
  });

  it('keeps the filters as text in step with the chips', async () => {
    const page = await signedIn();
    const text = page.getByLabel('Filters as text');
    await text.fill('model:gpt-4o customer_identifier:customer-1');
    await text.press('Enter');
    await page.getByText('1–5 of 5 logs').waitFor();
    assert.equal(await page.getByRole('button', { name: /^Remove filter/ }).count(), 2);
    await page.getByRole('button', { name: 'Remove filter model is gpt-4o' }).click();
    await page.getByText('1–15 of 15 logs').waitFor();
    assert.equal(await text.inputValue(), 'customer_identifier:customer-1');
    await text.fill('cost>');
    await text.press('Enter');
    assert.match(await page.getByRole('alert').innerText(), /^A value is missing \(at character 6\)\.$/);
    await page.getByText('1–15 of 15 logs').waitFor();
    await page.close();
  });

  it('searches what was said from the search box, in step with the text filter', async () => {
    const page = await signedIn();
    const box = page.getByLabel('Search what was said');
    await box.fill('QUESTION 42');
    await box.press('Enter');
    await page.getByText(/^1–1 of 1 logs?$/).waitFor();
    assert.match(await rows(page).first().innerText(), /question 42|answer 42/);
    assert.equal(await page.getByLabel('Filters as text').inputValue(), 'search:"QUESTION 42"');
    assert.ok(new URL(page.url()).search.includes('search'), 'the search is in the URL');
    await page.reload();
    await page.getByText(/^1–1 of 1 logs?$/).waitFor();
    assert.equal(await page.getByLabel('Search what was said').inputValue(), 'QUESTION 42');
    await page.getByLabel('Search what was said').fill('');
    await page.getByLabel('Search what was said').press('Enter');
    await page.getByText('1–50 of 60 logs').waitFor();
    await page.close();
  });

  it('adds ticked logs to a new dataset, then more to the same one, none twice', async () => {
    // A window the page fits: ticking scrolls nothing, so no logs load on under the page before Next.
    const page = await signedIn({ width: 1280, height: 2400 });
    const tick = (i: number) => rows(page).nth(i).getByRole('checkbox');
    for (const i of [0, 1, 2]) await tickBox(tick(i));
    await page.getByRole('button', { name: 'Add 3 to dataset…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add to a dataset' });
    await dialog.getByLabel('Name of the new dataset').fill('picked');
    await dialog.getByRole('button', { name: 'Add to dataset' }).click();
    await page.getByRole('heading', { name: 'picked' }).waitFor();
    await page.getByText('3 logs, 0 annotated (0%)').waitFor();

    await page.goBack();
    await page.getByText('1–50 of 60 logs').waitFor();
    // Added logs are no longer ticked; one of them again with a new one goes to the same dataset.
    assert.equal(await tick(0).isChecked(), false);
    for (const i of [0, 3]) await tickBox(tick(i));
    // The ticks outlive a page change.
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText('51–60 of 60 logs').waitFor();
    await page.getByRole('button', { name: 'Previous' }).click();
    await page.getByText('1–50 of 60 logs').waitFor();
    assert.equal(await tick(3).isChecked(), true);
    await page.getByRole('button', { name: 'Add 2 to dataset…' }).click();
    await dialog.getByRole('combobox').selectOption({ label: 'picked (3)' });
    await dialog.getByRole('button', { name: 'Add to dataset' }).click();
    await page.getByText('4 logs, 0 annotated (0%)').waitFor();
    await page.close();
  });

  it('saves the screen as a view and brings it back, filters and columns', async () => {
    const page = await signedIn();
    await page.getByLabel('Filters as text').fill('model:gpt-4o');
    await page.getByLabel('Filters as text').press('Enter');
    await page.getByText('1–20 of 20 logs').waitFor();
    await page.getByText('Columns', { exact: true }).click();
    await page.getByRole('checkbox', { name: 'Customer' }).uncheck();
    await page.getByText('Columns', { exact: true }).click();
    await page.getByRole('button', { name: 'Save view…' }).click();
    await page.getByLabel('View name').fill('Only 4o');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('button', { name: 'Save view…' }).waitFor();

    const saved = await session.api('GET', '/api/views/');
    assert.equal(saved.body.count, 1);
    assert.ok(!saved.body.results[0].query.includes('at='), 'saved without its anchor');
    assert.ok(!saved.body.results[0].columns.includes('customer'));

    await page.getByText('Columns', { exact: true }).click();
    await page.getByRole('checkbox', { name: 'Customer' }).check();
    await page.getByText('Columns', { exact: true }).click();
    await page.getByRole('button', { name: /^Remove filter/ }).click();
    await page.getByText('1–50 of 60 logs').waitFor();
    await page.getByLabel('Saved views').selectOption({ label: 'Only 4o' });
    await page.getByText('1–20 of 20 logs').waitFor();
    const headers = await page.getByRole('grid', { name: 'Logs' }).locator('thead th').allInnerTexts();
    assert.ok(!headers.includes('Customer'));
    await page.close();
  });

  it('switches to the dark theme, with screenshots of both', async () => {
    const page = await signedIn({ width: 1400, height: 900 });
    await page.getByLabel('Theme').selectOption('light');
    const light = await page.screenshot({ path: screenshotPath('explorer-light.png') });
    await page.getByLabel('Theme').selectOption('dark');
    assert.equal(await page.evaluate('document.documentElement.dataset.theme'), 'dark');
    const background = await page.evaluate('getComputedStyle(document.body).backgroundColor');
    assert.equal(background, 'rgb(13, 17, 23)');
    const dark = await page.screenshot({ path: screenshotPath('explorer-dark.png') });
    assert.notDeepEqual(light, dark);
    // The choice is kept: a reload is still dark.
    await page.reload();
    await page.getByText('1–50 of 60 logs').waitFor();
    assert.equal(await page.evaluate('document.documentElement.dataset.theme'), 'dark');
    await page.close();
  });

  it('makes a dataset from the filtered logs, then annotates it from the keyboard', async () => {
    const helpful = await session.api('POST', '/api/evaluators/', {
      body: { name: 'Helpful', score_value_type: 'boolean' },
    });
    const accuracy = await session.api('POST', '/api/evaluators/', { body: { name: 'Accuracy' } });
    assert.equal(helpful.status, 201);
    assert.equal(accuracy.status, 201);
    const page = await signedIn();
    await page.getByLabel('Field').selectOption('model');
    await page.getByLabel('Value').fill('gpt-4o');
    await page.getByRole('button', { name: 'Add filter' }).click();
    await page.getByText('1–20 of 20 logs').waitFor();

    await page.getByRole('button', { name: 'Create dataset…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create dataset' });
    await dialog.getByText('20 logs of every environment match').waitFor();
    await dialog.getByLabel('Name').fill('gpt-4o review');
    await dialog.getByLabel(/Sample/).fill('50');
    await dialog.getByText('10 logs will be copied into the dataset.').waitFor();
    await dialog.getByRole('button', { name: 'Create dataset' }).click();
    await page.getByRole('heading', { name: 'gpt-4o review' }).waitFor();
    await page.getByText('10 logs, 0 annotated (0%)').waitFor();
    const datasetId = new URL(page.url()).searchParams.get('id')!;
    const datasetRows = page.getByRole('table', { name: 'Dataset logs' }).locator('tbody tr');
    await datasetRows.nth(9).waitFor();
    assert.equal(await datasetRows.count(), 10);

    await page.getByRole('button', { name: 'Annotate' }).click();
    await page.getByText('log 1 of 10').waitFor();
    await page.keyboard.press('?');
    await page.getByRole('dialog', { name: 'Keys' }).waitFor();
    await page.keyboard.press('1');
    assert.equal(await page.evaluate('document.activeElement.tagName'), 'SELECT', '1 goes to the first evaluator');
    await page.keyboard.press('2');
    // Typed into a field, "2" is not a key: the focus stays.
    assert.equal(await page.evaluate('document.activeElement.tagName'), 'SELECT');
    await page.getByLabel('1. Helpful').selectOption('true');
    await page.getByLabel('2. Accuracy').fill('0.75');
    await page.keyboard.press('Control+Enter');
    await page.getByText('log 2 of 10').waitFor();
    await page.getByText('1 of 10 annotated').waitFor();

    const first = await session.api('GET', `/api/datasets/${datasetId}/logs/list/?page_size=1`);
    const item = first.body.results[0];
    assert.equal(item.annotation_status, 'completed');
    const scores = Object.fromEntries(
      (item.scores as { evaluator_name: string; score_value: number }[]).map((s) => [s.evaluator_name, s.score_value]),
    );
    assert.deepEqual(scores, { Helpful: 1, Accuracy: 0.75 });

    await page.locator('body').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('ArrowRight');
    await page.getByText('log 3 of 10').waitFor();
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowLeft');
    await page.getByText('log 1 of 10').waitFor();
    await page.getByText('Helpful: 1 (scored)').waitFor();

    await page.getByRole('link', { name: 'Datasets' }).click();
    const listed = page.getByRole('table', { name: 'Datasets' }).locator('tbody tr');
    await listed.first().waitFor();
    assert.match(await listed.first().innerText(), /gpt-4o review\s+10\s+10%/);
    await page.close();
  });

  it('ran without a script error or a Content-Security-Policy violation', () => {
    // A wrong key answers 401: the browser reports that failed call on the console, and nothing else.
    const unexpected = session.problemsExcept(/status of 401/);
    assert.deepEqual(unexpected, []);
  });
});
