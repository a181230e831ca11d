/**
 * The web UI's settings, saved views, datasets and annotation screens in a real browser (Debian's
 * Chromium through playwright-core) against a real gatelog with its own database: provider keys and
 * evaluators set from the UI with the API's errors next to their fields; the view in use shown, updated,
 * renamed and deleted; datasets made empty, renamed, described and deleted; annotation showing the
 * whole log (every message, a failed call's error, cost, metadata, each score's type and range), stacked
 * on a phone without overflow. Screenshots go to GATELOG_UI_SCREENSHOTS (default: a temporary directory).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Locator } from 'playwright-core';
import { withoutChromium } from '../support/chromium.js';
import { browserSession, screenshotPath, settingsLink } from '../support/browser-session.js';
import { documentWidths, foldedTexts, settles } from '../support/page-checks.js';
import { toolCallTurn } from '../support/chat-messages.js';

/** A support chat of several turns: a system message, a tool call and its result, then a follow-up. */
const CONVERSATION = [
  { role: 'system', content: 'You are the support agent of Acme.' },
  { role: 'user', content: 'Where is my order 42?' },
  toolCallTurn('call_1', 'lookup_order', '{"order_id":42}'),
  { role: 'tool', tool_call_id: 'call_1', content: '{"status":"shipped"}' },
  { role: 'user', content: 'And when will it arrive?' },
];

describe('web UI pages in Chromium', { skip: withoutChromium }, () => {
  let datasetId: string;
  const session = browserSession({
    seed: async (s) => {
      const now = Date.now();
      const [chatId, failedId] = await s.seedLogs([
        {
          model: 'acme-local-model',
          input: CONVERSATION,
          output: { role: 'assistant', content: 'It arrives on Friday.' },
          usage: { prompt_tokens: 120, completion_tokens: 8 },
          latency: 1.25,
          metadata: { ticket: 'T-1001', tier: 'gold' },
          timestamp: new Date(now - 20_000).toISOString(),
        },
        {
          model: 'gpt-4o',
          input: [{ role: 'user', content: 'hello?' }],
          status_code: 500,
          error_message: 'Upstream said: the model is overloaded',
          latency: 0.4,
          metadata: { ticket: 'T-1002' },
          timestamp: new Date(now - 10_000).toISOString(),
        },
      ]);
      const dataset = await s.api('POST', '/api/datasets/', { body: { name: 'review' } });
      assert.equal(dataset.status, 201, dataset.text);
      datasetId = dataset.body.id;
      // One at a time: the dataset lists its logs in the order they were added.
      for (const id of [chatId, failedId]) {
        const added = await s.api('POST', `/api/datasets/${datasetId}/logs/`, { body: { log_ids: [id] } });
        assert.equal(added.status, 201, added.text);
      }
      for (const body of [
        { name: 'Helpful', score_value_type: 'boolean' },
        { name: 'Accuracy', type: 'llm', description: 'From 1 (wrong) to 5 (exact)' },
      ]) {
        const made = await s.api('POST', '/api/evaluators/', { body });
        assert.equal(made.status, 201, made.text);
      }
    },
  });

  /** A page signed in with the organization's key, on the screen of `query` ("?v=settings"). */
  const signedIn = (query = '', viewport = { width: 1280, height: 900 }) =>
    session.signedIn(query, { viewport, ready: settingsLink });

  // Run in the page; these tests are compiled without the DOM's types, hence the casts.
  const selectedText = (select: Locator) =>
    select.evaluate((s) => (s as unknown as { selectedOptions: { text: string }[] }).selectedOptions[0]?.text);
  const textAlign = (cell: Locator) =>
    cell.evaluate(
      (c) =>
        (globalThis as unknown as { getComputedStyle(e: unknown): { textAlign: string } }).getComputedStyle(c)
          .textAlign,
    );

  it('sets, shows and deletes a provider key, the API naming the field at fault', async () => {
    const page = await signedIn();
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Settings' }).waitFor();
    assert.equal(new URL(page.url()).searchParams.get('v'), 'settings');
    await page.getByText('No provider key yet').waitFor();
    const form = page.getByRole('form', { name: 'Set a provider key' });

    // No key: the API's error sits under the API key field, which is marked invalid.
    await form.getByRole('button', { name: 'Save key' }).click();
    const keyField = form.getByRole('textbox', { name: /^API key/ }).or(form.locator('input[type=password]'));
    await form.locator('#provider-key-api_key-error').waitFor();
    assert.match(await form.locator('#provider-key-api_key-error').innerText(), /^api_key: /);
    assert.equal(await keyField.getAttribute('aria-invalid'), 'true');
    assert.equal(await keyField.getAttribute('aria-describedby'), 'provider-key-api_key-error');

    // A base URL that is not one: its own field's error, the key field's error gone.
    await keyField.fill('sk-test-abcdefghijklmnop1234');
    await form.getByLabel('Base URL (optional)').fill('ftp://example.test');
    await form.getByRole('button', { name: 'Save key' }).click();
    await form.locator('#provider-key-base_url-error').waitFor();
    assert.match(await form.locator('#provider-key-base_url-error').innerText(), /base_url/);
    assert.equal(await form.locator('#provider-key-api_key-error').count(), 0);

    await form.getByLabel('Base URL (optional)').fill('');
    await form.getByRole('button', { name: 'Save key' }).click();
    const table = page.getByRole('table', { name: 'Provider keys' });
    await table.waitFor();
    const listed = await session.api('GET', '/api/provider-keys/');
    const preview = listed.body.results[0].api_key_preview as string;
    assert.ok(!preview.includes('abcdefghijklmnop'), 'a preview only');
    const row = table.locator('tbody tr');
    assert.equal(await row.count(), 1);
    assert.match(
      await row.innerText(),
      new RegExp(`openai\\s+${preview.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s+default`),
    );
    assert.ok(!(await page.content()).includes('sk-test-abcdefghijklmnop1234'), 'the key is not shown again');
    assert.equal(await keyField.inputValue(), '', 'the field is cleared once saved');

    await row.getByRole('button', { name: 'Delete key openai' }).click();
    await row.getByRole('button', { name: 'Delete the openai key' }).click();
    await page.getByText('No provider key yet').waitFor();
    assert.deepEqual((await session.api('GET', '/api/provider-keys/')).body.results, []);
    await page.close();
  });

  it('creates and edits an evaluator, a bad slug shown next to its field', async () => {
    const page = await signedIn('?v=settings');
    const table = page.getByRole('table', { name: 'Evaluators' });
    await table.waitFor();
    assert.equal(await table.locator('tbody tr').count(), 2);
    assert.match(
      await table.locator('tbody tr').nth(1).innerText(),
      /Accuracy\s+accuracy\s+llm\s+numerical \(any number\)/,
    );

    const form = page.getByRole('form', { name: 'Create an evaluator' });
    await form.getByLabel('Name').fill('Tone');
    await form.getByLabel('Slug (optional)').fill('Bad Slug!');
    await form.getByLabel('Score type').selectOption('boolean');
    await form.getByRole('button', { name: 'Create evaluator' }).click();
    const slugError = form.locator('#new-evaluator-evaluator_slug-error');
    await slugError.waitFor();
    assert.match(await slugError.innerText(), /evaluator_slug: must be lowercase letters, digits, _ or -/);
    assert.equal(await form.getByLabel('Slug (optional)').getAttribute('aria-invalid'), 'true');

    await form.getByLabel('Slug (optional)').fill('tone');
    await form.getByLabel('Description').fill('Polite?');
    await form.getByRole('button', { name: 'Create evaluator' }).click();
    await table.locator('tbody tr').nth(2).waitFor();
    assert.match(await table.locator('tbody tr').nth(2).innerText(), /Tone\s+tone\s+human\s+boolean \(yes or no/);

    // Edit: the score type is shown, not changeable; a slug taken by another evaluator is a 409 on its field.
    await table.getByRole('button', { name: 'Edit evaluator Tone' }).click();
    const edit = page.getByRole('form', { name: 'Edit evaluator Tone' });
    assert.equal(await edit.getByLabel('Score type').isDisabled(), true);
    await edit.getByLabel('Slug').fill('accuracy');
    await edit.getByRole('button', { name: 'Save evaluator' }).click();
    const conflict = edit.locator('[id$="-evaluator_slug-error"]');
    await conflict.waitFor();
    assert.match(await conflict.innerText(), /already exists/);

    await edit.getByLabel('Name').fill('Politeness');
    await edit.getByLabel('Slug').fill('politeness');
    await edit.getByRole('combobox', { name: /^Type/ }).selectOption('code');
    await edit.getByRole('button', { name: 'Save evaluator' }).click();
    await edit.waitFor({ state: 'detached' });
    assert.match(await table.locator('tbody tr').nth(2).innerText(), /Politeness\s+politeness\s+code\s+boolean/);
    const evaluators = await session.api('GET', '/api/evaluators/');
    const politeness = evaluators.body.results.find((e: { name: string }) => e.name === 'Politeness');
    assert.deepEqual(
      [politeness.evaluator_slug, politeness.type, politeness.score_value_type, politeness.description],
      ['politeness', 'code', 'boolean', 'Polite?'],
    );
    for (const theme of ['light', 'dark']) {
      await page.getByLabel('Theme').selectOption(theme);
      await page.screenshot({ path: screenshotPath(`settings-${theme}.png`), fullPage: true });
    }
    await page.close();
  });

  it('shows the saved view in use, updates it to the screen, renames and deletes it', async () => {
    const page = await signedIn();
    const views = page.getByLabel('Saved views');
    const filterText = page.getByLabel('Filters as text');
    await filterText.fill('model:gpt-4o');
    await filterText.press('Enter');
    await page.waitForURL(/filters=/);
    await page.getByRole('button', { name: 'Save view…' }).click();
    await page.getByLabel('View name').fill('Failures');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('button', { name: 'Save view…' }).waitFor();
    assert.equal(await selectedText(views), 'Failures', 'the view in use is shown by name');
    assert.equal(await page.getByText('changed', { exact: true }).count(), 0);

    // A name taken: the API's 409 next to the name field.
    await page.getByRole('button', { name: 'Save view…' }).click();
    await page.getByLabel('View name').fill('Failures');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.locator('#view-new-name-error').waitFor();
    assert.match(await page.locator('#view-new-name-error').innerText(), /already exists/);
    await page.getByRole('button', { name: 'Cancel' }).click();
    assert.equal(await page.locator('#view-new-name-error').count(), 0, 'the error goes with its form');
    assert.equal(await page.getByRole('alert').count(), 0);

    // As the side panels: the form's field has the focus, Esc closes it, the opener gets the focus back.
    await page.getByRole('button', { name: 'Save view…' }).click();
    await settles(
      page,
      'document.activeElement?.getAttribute("aria-label")',
      'View name',
      'the name field has the focus',
    );
    await page.keyboard.press('Escape');
    await page.getByLabel('View name').waitFor({ state: 'detached' });
    await settles(page, 'document.activeElement?.textContent?.trim()', 'Save view…', 'the focus is back on Save view…');

    // The screen changes: the view is marked changed, and updated to the screen.
    await filterText.fill('model:acme-local-model');
    await filterText.press('Enter');
    await page.waitForURL(/acme-local-model/);
    await page.getByText('changed', { exact: true }).waitFor();
    await page.screenshot({ path: screenshotPath('view-changed.png') });
    await page.getByRole('button', { name: 'Update view Failures to this screen' }).click();
    await page.getByText('changed', { exact: true }).waitFor({ state: 'detached' });
    let saved = await session.api('GET', '/api/views/');
    assert.equal(saved.body.count, 1);
    assert.match(decodeURIComponent(saved.body.results[0].query), /acme-local-model/);

    // Rename and delete are in the view's menu.
    await page.getByText('Manage', { exact: true }).click();
    await page.getByRole('button', { name: 'Rename view Failures' }).click();
    await page.getByLabel('New view name').fill('Local model');
    await page.getByRole('button', { name: 'Rename', exact: true }).click();
    await page.getByLabel('Manage view Local model').waitFor();
    assert.equal(await selectedText(views), 'Local model');
    saved = await session.api('GET', '/api/views/');
    assert.equal(saved.body.results[0].name, 'Local model');

    // A reload keeps the view in use.
    await page.reload();
    await page.getByLabel('Manage view Local model').waitFor();
    assert.equal(await selectedText(views), 'Local model');

    await page.getByLabel('Manage view Local model').click();
    await page.getByRole('button', { name: 'Delete view Local model' }).click();
    await page.getByRole('button', { name: 'Delete view Local model' }).click();
    await page.getByLabel('Manage view Local model').waitFor({ state: 'detached' });
    assert.equal(await selectedText(views), 'Views…');
    assert.equal((await session.api('GET', '/api/views/')).body.count, 0);
    await page.close();
  });

  it('creates an empty dataset, renames and describes it, deletes it; numbers align with their headers', async () => {
    const page = await signedIn('?v=datasets');
    const table = page.getByRole('table', { name: 'Datasets' });
    await table.waitFor();
    await page.getByRole('button', { name: 'New empty dataset…' }).click();
    const create = page.getByRole('form', { name: 'New empty dataset' });
    // No name: the API's 400 under the name field.
    await create.getByRole('button', { name: 'Create dataset' }).click();
    await create.locator('#new-dataset-name-error').waitFor();
    assert.match(await create.locator('#new-dataset-name-error').innerText(), /^name: /);
    await create.getByLabel('Name').fill('Hand picked');
    await create.getByLabel('Description').fill('to fill later');
    await create.getByRole('button', { name: 'Create dataset' }).click();
    await create.waitFor({ state: 'detached' });
    const row = table.locator('tbody tr', { hasText: 'Hand picked' });
    await row.waitFor();
    assert.match(await row.innerText(), /Hand picked\s+to fill later\s+0\s+0%/);

    // Numbers and their headers are right-aligned, the name left.
    const align = textAlign;
    const headers = table.locator('thead th');
    assert.deepEqual(
      [await align(headers.nth(0)), await align(headers.nth(1)), await align(headers.nth(2))],
      ['left', 'right', 'right'],
    );
    assert.deepEqual(
      [await align(row.locator('td').nth(1)), await align(row.locator('td').nth(2))],
      ['right', 'right'],
    );
    const headerBox = (await headers.nth(1).boundingBox())!;
    const cellBox = (await row.locator('td').nth(1).boundingBox())!;
    assert.ok(Math.abs(headerBox.x + headerBox.width - (cellBox.x + cellBox.width)) < 1, 'same right edge');

    await row.getByRole('button', { name: 'Edit dataset Hand picked' }).click();
    const edit = page.getByRole('form', { name: 'Edit dataset Hand picked' });
    await edit.getByLabel('Name').fill('Weekly failures');
    await edit.getByLabel('Description').fill('The failed calls of this week');
    await edit.getByRole('button', { name: 'Save dataset' }).click();
    const renamed = table.locator('tbody tr', { hasText: 'Weekly failures' });
    await renamed.waitFor();
    assert.match(await renamed.innerText(), /The failed calls of this week/);
    await page.screenshot({ path: screenshotPath('datasets.png') });
    const listed = await session.api('GET', '/api/datasets/');
    const made = listed.body.results.find((d: { name: string }) => d.name === 'Weekly failures');
    assert.equal(made.description, 'The failed calls of this week');
    assert.equal(made.log_count, 0);

    await renamed.getByRole('button', { name: 'Delete dataset Weekly failures' }).click();
    assert.equal(new URL(page.url()).searchParams.get('v'), 'datasets', 'asking does not open the dataset');
    await renamed.getByRole('button', { name: /^Delete Weekly failures and its 0 logs$/ }).click();
    await renamed.waitFor({ state: 'detached' });
    assert.equal((await session.api('GET', `/api/datasets/${made.id}/`)).status, 404);
    // The list stays shown while it is read again (no blink to "Loading…"): the other dataset is there.
    assert.equal(await table.locator('tbody tr').count(), 1);
    assert.match(await table.locator('tbody tr').innerText(), /^review\s/);
    await page.close();
  });

  it('shows the whole log to annotate: every message, cost, metadata, each score field with its type and range', async () => {
    const page = await signedIn(`?v=annotate&id=${datasetId}&item=1`);
    await page.getByText('log 1 of 2').waitFor();
    const log = page.getByRole('article', { name: 'Log' });
    const prompt = log.getByRole('list', { name: 'Prompt messages' }).locator(':scope > li');
    const said = await foldedTexts(prompt);
    assert.deepEqual(said, [
      'SYSTEM You are the support agent of Acme.',
      'USER Where is my order 42?',
      'ASSISTANT calls lookup_order (call_1) { "order_id": 42 }',
      'TOOL · result of call_1 { "status": "shipped" }',
      'USER And when will it arrive?',
    ]);
    assert.match(await log.getByRole('list', { name: 'Completion message' }).innerText(), /It arrives on Friday\./);
    const facts = (await log.locator('.ann-facts').innerText()).replace(/\s+/g, ' ');
    assert.match(facts, /Status 200 success/);
    assert.match(facts, /Model acme-local-model/);
    assert.match(facts, /Cost unknown/, 'no price known: unknown, not $0');
    assert.ok(!facts.includes('$0'));
    assert.match(facts, /Latency 1\.25 s/);
    assert.match(facts, /Tokens 120 in, 8 out/);
    const metadata = (await log.getByRole('table', { name: 'Metadata' }).innerText()).replace(/\s+/g, ' ');
    assert.match(metadata, /ticket T-1001 tier gold/);

    // Each score field says what it takes, tied to the field for screen readers.
    const helpful = page.getByLabel('1. Helpful');
    const accuracy = page.getByLabel('2. Accuracy');
    const hint = async (field: Locator) => page.locator(`#${await field.getAttribute('aria-describedby')}`).innerText();
    assert.match(await hint(helpful), /^boolean · yes or no \(stored as 1 or 0\) · human evaluator/);
    assert.match(await hint(accuracy), /^numerical · any number · llm evaluator\s+From 1 \(wrong\) to 5 \(exact\)$/);
    await page.screenshot({ path: screenshotPath('annotate-wide.png'), fullPage: true });

    // The failed call: its status and the error of the log it was copied from.
    await page.locator('body').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('ArrowRight');
    await page.getByText('log 2 of 2').waitFor();
    const failure = page.getByRole('note', { name: 'Failed call' });
    await failure.getByText('Upstream said: the model is overloaded').waitFor();
    assert.match(await failure.innerText(), /Failed: 500 error/);
    const failedFacts = (await log.locator('.ann-facts').innerText()).replace(/\s+/g, ' ');
    assert.match(failedFacts, /Cost none A failed call is not charged\./);
    assert.match(await log.getByRole('table', { name: 'Metadata' }).innerText(), /T-1002/);
    await page.close();
  });

  it('stacks the annotation screen on a phone: no sideways scrolling, the form over no heading', async () => {
    const page = await signedIn(`?v=annotate&id=${datasetId}&item=1`, { width: 390, height: 844 });
    await page.getByText('log 1 of 2').waitFor();
    await page.getByRole('list', { name: 'Prompt messages' }).waitFor();
    const width = await documentWidths(page);
    assert.ok(width.scroll <= width.client, `no horizontal overflow (${width.scroll} > ${width.client})`);
    const form = (await page.getByRole('form', { name: 'Annotation of this log' }).boundingBox())!;
    assert.ok(form.x >= 0 && form.x + form.width <= 390, 'the form fits the screen');
    for (const name of ['Prompt', 'Completion', 'Metadata']) {
      const heading = (await page.getByRole('heading', { name, exact: true }).boundingBox())!;
      const overlaps =
        heading.x < form.x + form.width &&
        form.x < heading.x + heading.width &&
        heading.y < form.y + form.height &&
        form.y < heading.y + heading.height;
      assert.ok(!overlaps, `the form does not cover the ${name} heading`);
      assert.ok(heading.y + heading.height <= form.y, `${name} comes before the form (stacked)`);
    }
    await page.screenshot({ path: screenshotPath('annotate-phone.png'), fullPage: true });
    await page.close();
  });

  it('says nothing of evaluators while they are listed, then shows their fields', async () => {
    const page = await session.page({ viewport: { width: 1280, height: 900 } });
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/api/evaluators/?page_size=1000', async (route) => {
      await held;
      await route.continue();
    });
    await session.signIn(page, `?v=annotate&id=${datasetId}&item=1`, { ready: settingsLink });
    // The log is shown while the evaluators are still on their way.
    await page.getByRole('list', { name: 'Prompt messages' }).waitFor();
    const form = page.getByRole('form', { name: 'Annotation of this log' });
    assert.equal(await form.getByText('No evaluators yet').count(), 0, 'no evaluators claimed before they are listed');
    release();
    await form.getByLabel(/Helpful/).waitFor();
    assert.equal(await form.getByText('No evaluators yet').count(), 0);
    await page.close();
  });

  it('ran without a script error or a Content-Security-Policy violation', () => {
    // The API's refusals the forms show (400, 409) are failed calls the browser reports on its console.
    const unexpected = session.problemsExcept(/status of (400|409)/);
    assert.deepEqual(unexpected, []);
  });
});
