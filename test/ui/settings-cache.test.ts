/**
 * The web UI's response cache and providers in a real browser (Debian's Chromium through
 * playwright-core) against a real gatelog, its database and the fake provider: the cache's defaults set
 * in the settings (a TTL typed in days or hours, sent as seconds, only what changed) and read back from
 * the API; the cache emptied from the UI (the next call a miss again); an Azure provider registered with
 * its API version and a second, weighted key, both listed, then one key deleted; and the explorer's
 * optional Cache column marking the log of a call answered from the cache. With the pure pieces behind
 * them: TTL units, a name's default kind, models typed as one line.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type OpenAI from 'openai';
import { type Page } from 'playwright-core';
import { MAX_CACHE_TTL_S } from '../../src/org-settings/settings.js';
import { MAX_TTL_S, ttlParts, ttlSeconds, ttlText } from '../../ui/src/lib/cache-ttl.js';
import {
  defaultKind,
  modelsText,
  optionFields,
  optionValue,
  parseModels,
  type ProviderKindInfo,
} from '../../ui/src/lib/provider-form.js';
import { withoutChromium } from '../support/chromium.js';
import { browserSession, screenshotPath, servedProxyApp, settingsLink } from '../support/browser-session.js';
import { cacheWrites, storedAfter } from '../support/cache-writes.js';
import { columnIndex, foldedTexts } from '../support/page-checks.js';
import { poll } from '../support/poll.js';
import { logNamedBy } from '../support/proxy-app.js';

describe('web UI cache TTL and provider form text', () => {
  it('shows a TTL in the largest unit it is a whole number of, and reads one typed back as seconds', () => {
    assert.deepEqual(ttlParts(30 * 86_400), { amount: 30, unit: 'days' });
    assert.deepEqual(ttlParts(5400), { amount: 90, unit: 'minutes' });
    assert.deepEqual(ttlParts(7200), { amount: 2, unit: 'hours' });
    assert.deepEqual(ttlParts(61), { amount: 61, unit: 'seconds' });
    assert.equal(ttlText(86_400), '1 day');
    assert.equal(ttlText(43_200), '12 hours');
    assert.deepEqual(ttlSeconds('12', 'hours'), { seconds: 43_200 });
    assert.deepEqual(ttlSeconds(' 1.1 ', 'hours'), { seconds: 3960 });
    assert.deepEqual(ttlSeconds('365', 'days'), { seconds: MAX_TTL_S });
    assert.deepEqual(ttlSeconds('1', 'seconds'), { seconds: 1 });
    assert.equal(MAX_TTL_S, MAX_CACHE_TTL_S, 'the UI allows what the API allows');
    for (const [amount, unit, problem] of [
      ['366', 'days', /At most a year/],
      ['0', 'hours', /At least 1 second/],
      ['-2', 'minutes', /At least 1 second/],
      ['1.5', 'seconds', /not a whole number of seconds/],
      ['', 'days', /Give a number/],
      ['soon', 'days', /Give a number/],
    ] as const) {
      const read = ttlSeconds(amount, unit);
      assert.ok('problem' in read, `${amount} ${unit} is refused`);
      assert.match(read.problem, problem);
    }
  });

  it('defaults a kind from the name as the API does, and reads models as one comma-separated line', () => {
    // In the order the server lists them: the first is the default.
    const kinds = ['openai', 'anthropic', 'azure'];
    assert.equal(defaultKind('azure', kinds), 'azure');
    assert.equal(defaultKind(' anthropic ', kinds), 'anthropic');
    assert.equal(defaultKind('groq', kinds), 'openai');
    assert.equal(defaultKind('Azure', kinds), 'openai', 'names are exact, as the API reads them');
    assert.deepEqual(parseModels(' llama-*, mixtral-8x7b,, '), ['llama-*', 'mixtral-8x7b']);
    assert.deepEqual(parseModels(''), []);
    assert.equal(modelsText(['a', 'b*']), 'a, b*');
    assert.equal(modelsText(null), '');
  });

  it("makes a kind's option fields from its JSON Schema, and sends what was typed in the field's type", () => {
    const kind: ProviderKindInfo = {
      kind: 'signed',
      label: 'Signed',
      routes: ['chat'],
      model_families: [],
      base_url_required: true,
      base_url_hint: 'https://signed.example',
      options: {
        properties: {
          key_name: { type: 'string', title: 'Key name', examples: ['primary'] },
          max_skew: { type: 'integer' },
        },
        required: ['key_name'],
      },
    };
    const [keyName, maxSkew] = optionFields(kind);
    assert.deepEqual(
      [keyName.name, keyName.label, keyName.required, keyName.placeholder, keyName.numeric],
      ['key_name', 'Key name', true, 'primary', false],
    );
    assert.deepEqual([maxSkew.label, maxSkew.required, maxSkew.numeric], ['max_skew', false, true]);
    assert.equal(optionValue(keyName, ' primary '), 'primary');
    assert.equal(optionValue(keyName, '  '), undefined, 'blank: not sent, the default');
    assert.equal(optionValue(maxSkew, '30'), 30);
    assert.equal(optionValue(maxSkew, 'soon'), 'soon', 'not a number: sent for the API to refuse by name');
    assert.deepEqual(optionFields(undefined), []);
  });
});

describe('web UI response cache and providers in Chromium', { skip: withoutChromium }, () => {
  let hitLogId: string;
  let missLogId: string;
  const question = {
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'Is this answered from the cache?' }],
    cache_enabled: true,
  } as OpenAI.ChatCompletionCreateParamsNonStreaming;
  const session = browserSession({
    start: servedProxyApp,
    seed: async (): Promise<void> => {
      const first = await ask();
      const second = await ask();
      assert.deepEqual([first.cache, second.cache], ['MISS', 'HIT']);
      assert.equal((await logNamedBy(session.served.p, second.logId)).cache_hit, true);
      assert.equal((await logNamedBy(session.served.p, first.logId)).cache_hit, false);
      hitLogId = second.logId!;
      missLogId = first.logId!;
    },
  });
  /** The question asked through the official client: whether the cache answered it, and its log. */
  const ask = async (): Promise<{ cache: string | null; logId: string | null }> => {
    const { p } = session.served;
    const stored = await cacheWrites(p.t.baseUrl);
    const { response } = await p.client.chat.completions.create(question).withResponse();
    await p.t.flush();
    const cache = response.headers.get('x-gatelog-cache');
    // The cache's write follows the answer.
    if (cache === 'MISS') await storedAfter(p.t.baseUrl, stored);
    return { cache, logId: response.headers.get('x-gatelog-log-id') };
  };

  /** A page signed in with the organization's key, on the screen of `query` ("?v=settings"). */
  const signedIn = (query = '', viewport = { width: 1280, height: 900 }) =>
    session.signedIn(query, { viewport, ready: settingsLink });

  // Run in the page; these tests are compiled without the DOM's types, hence the casts.
  type Doc = {
    document: {
      activeElement: { textContent: string | null; getAttribute(name: string): string | null } | null;
      documentElement: { scrollWidth: number; clientWidth: number };
    };
  };
  const focused = (page: Page) =>
    page.evaluate(() => {
      const active = (globalThis as unknown as Doc).document.activeElement;
      return { text: active?.textContent ?? null, type: active?.getAttribute('type') ?? null };
    });

  it('shows the Cache column, not by default, marking the log answered from the cache; filters on it', async () => {
    const page = await signedIn();
    const grid = page.getByRole('grid', { name: 'Logs' });
    await grid.locator(`tbody tr[data-log-id="${hitLogId}"]`).waitFor();
    assert.equal(await grid.locator('thead th', { hasText: 'Cache' }).count(), 0, 'an optional column');
    await page.getByText('Columns', { exact: true }).click();
    await page.getByRole('checkbox', { name: 'Cache', exact: true }).check();
    await grid.locator('thead th', { hasText: 'Cache' }).waitFor();
    const column = await columnIndex(grid, 'Cache');
    const cell = (id: string) => grid.locator(`tbody tr[data-log-id="${id}"] td`).nth(column);
    assert.equal((await cell(hitLogId).innerText()).trim(), 'hit');
    assert.equal((await cell(missLogId).innerText()).trim(), '');
    // The choice is kept: the column is there after a reload.
    await page.reload();
    await grid.locator('thead th', { hasText: 'Cache' }).waitFor();

    // cache_hit is a filter the UI knows: the hits alone, each marked.
    const filterText = page.getByLabel('Filters as text');
    await filterText.fill('cache_hit:true');
    await filterText.press('Enter');
    await page.waitForURL(/filters=/);
    await grid.locator(`tbody tr[data-log-id="${missLogId}"]`).waitFor({ state: 'detached' });
    const rows = grid.locator('tbody tr');
    assert.equal(await rows.count(), 1);
    assert.equal(await rows.first().getAttribute('data-log-id'), hitLogId);
    assert.equal((await cell(hitLogId).innerText()).trim(), 'hit');
    await page.close();
  });

  it('empties the cache after asking, says how many entries went, and the next call is a miss', async () => {
    const page = await signedIn('?v=settings');
    const part = page.getByRole('region', { name: 'Response cache' });
    await part.getByRole('button', { name: 'Empty the cache' }).click();
    const confirm = part.getByRole('button', { name: 'Remove every cached answer' });
    await confirm.waitFor();
    // The focus moves once the question is drawn: looked at until then (at most 2 s).
    await poll(async () => (await focused(page)).text === 'Remove every cached answer', 2000);
    assert.equal((await focused(page)).text, 'Remove every cached answer', 'the question takes the focus');
    // Cancel keeps the cache.
    await part.getByRole('button', { name: 'Cancel' }).click();
    assert.equal(await confirm.count(), 0);
    assert.equal((await ask()).cache, 'HIT');

    await part.getByRole('button', { name: 'Empty the cache' }).click();
    await confirm.click();
    const said = part.getByRole('status');
    await said.waitFor();
    assert.equal(await said.innerText(), 'The cache is empty: 1 cached entry removed.');
    assert.equal((await ask()).cache, 'MISS', 'the answer is no longer kept');

    // Emptied again at once: it holds the one answer just kept.
    await part.getByRole('button', { name: 'Empty the cache' }).click();
    await confirm.click();
    await part.getByText('1 cached entry removed').waitFor();
    await part.getByRole('button', { name: 'Empty the cache' }).click();
    await confirm.click();
    await part.getByText('The cache was already empty.').waitFor();
    await page.close();
  });

  it("sets the cache's defaults in a readable unit, sending only what changed, read back from the API", async () => {
    const page = await signedIn('?v=settings');
    const form = page.getByRole('form', { name: 'Response cache defaults' });
    const enabled = form.getByRole('checkbox', { name: 'Cache calls by default' });
    const byCustomer = form.getByRole('checkbox', { name: 'A cache per customer' });
    const omitLog = form.getByRole('checkbox', { name: 'No log for a cache hit' });
    const ttl = form.getByLabel('Keep answers for');
    const unit = form.getByLabel('Unit of the time answers are kept');
    await enabled.waitFor();
    // The API's defaults: off, 30 days, no option.
    assert.equal(await enabled.isChecked(), false);
    assert.equal(await ttl.inputValue(), '30');
    assert.equal(await unit.inputValue(), 'days');
    assert.deepEqual([await byCustomer.isChecked(), await omitLog.isChecked()], [false, false]);
    // Each option says what it does (its description), and names the per-call parameter.
    assert.match((await byCustomer.getAttribute('aria-describedby')) ?? '', /cache_by_customer-hint/);
    assert.match(await form.getByText(/^omit_log:/).innerText(), /writes no log/);

    const patches: unknown[] = [];
    page.on('request', (r) => {
      if (r.method() === 'PATCH' && r.url().endsWith('/api/settings/')) patches.push(r.postDataJSON());
    });
    // Past a year: refused next to the field, in the unit typed, nothing sent.
    await ttl.fill('400');
    await form.getByRole('button', { name: 'Save cache settings' }).click();
    const ttlError = form.locator('#cache-settings-cache_ttl-error');
    await ttlError.waitFor();
    assert.match(await ttlError.innerText(), /^cache_ttl: At most a year/);
    assert.equal(await ttl.getAttribute('aria-invalid'), 'true');
    assert.match((await ttl.getAttribute('aria-describedby')) ?? '', /cache-settings-cache_ttl-error/);
    assert.deepEqual(patches, []);

    await enabled.check();
    await ttl.fill('12');
    await unit.selectOption('hours');
    await byCustomer.check();
    await form.getByRole('button', { name: 'Save cache settings' }).click();
    await form.getByRole('status').waitFor();
    assert.equal(
      await form.getByRole('status').innerText(),
      'Saved: the cache is on by default, answers kept 12 hours.',
    );
    assert.equal(await ttlError.count(), 0, 'the error is gone once saved');
    assert.equal(await ttl.getAttribute('aria-invalid'), null);
    assert.deepEqual(patches, [{ cache_enabled: true, cache_ttl: 43_200, cache_options: { cache_by_customer: true } }]);
    const read = await session.api('GET', '/api/settings/');
    assert.deepEqual(read.body, {
      cache_enabled: true,
      cache_ttl: 43_200,
      cache_options: { cache_by_customer: true, omit_log: false },
      retention_days: null,
      content_retention_days: null,
    });

    // Saved as is: nothing to send.
    await form.getByRole('button', { name: 'Save cache settings' }).click();
    await form.getByText('Nothing changed.').waitFor();
    assert.equal(patches.length, 1);

    // A reload shows what the API holds; one option changed sends that option alone.
    await page.reload();
    await enabled.waitFor();
    assert.equal(await enabled.isChecked(), true);
    assert.deepEqual([await ttl.inputValue(), await unit.inputValue()], ['12', 'hours']);
    assert.equal(await byCustomer.isChecked(), true);
    await omitLog.check();
    await byCustomer.uncheck();
    await ttl.fill('1');
    await unit.selectOption('days');
    await form.getByRole('button', { name: 'Save cache settings' }).click();
    await form.getByText('answers kept 1 day').waitFor();
    assert.deepEqual(patches.at(-1), {
      cache_ttl: 86_400,
      cache_options: { cache_by_customer: false, omit_log: true },
    });
    const again = await session.api('GET', '/api/settings/');
    assert.deepEqual(again.body, {
      cache_enabled: true,
      cache_ttl: 86_400,
      cache_options: { cache_by_customer: false, omit_log: true },
      retention_days: null,
      content_retention_days: null,
    });
    await page.close();
  });

  it('registers an Azure provider with its API version and a second weighted key, lists them, deletes one key', async () => {
    const page = await signedIn('?v=settings');
    const form = page.getByRole('form', { name: 'Set a provider key' });
    const kind = form.getByLabel('Kind');
    await form.getByLabel('Provider').fill('azure');
    // The kind follows the name, as the API defaults it; Azure asks for its API version and base URL.
    assert.equal(await kind.inputValue(), 'azure');
    const apiVersion = form.getByLabel('API version (optional)');
    await apiVersion.waitFor();
    const baseUrl = form.getByLabel('Base URL (required)');
    const secret = form.locator('input[type=password]');
    await secret.fill('azure-key-0000000001');
    await apiVersion.fill('2024-06-01');
    await form.getByLabel('Models (optional)').fill('gpt-4o, bad model');
    await form.getByRole('button', { name: 'Save key' }).click();
    const baseUrlError = form.locator('#provider-key-base_url-error');
    await baseUrlError.waitFor();
    assert.match(await baseUrlError.innerText(), /base_url/);
    assert.equal(await baseUrl.getAttribute('aria-invalid'), 'true');

    // The second model is not one: the API names models.1, shown under the models field.
    await baseUrl.fill('https://contoso.openai.azure.com');
    await form.getByRole('button', { name: 'Save key' }).click();
    const modelsError = form.locator('#provider-key-models-error');
    await modelsError.waitFor();
    assert.match(await modelsError.innerText(), /prefix ending in \*/);
    const models = form.getByLabel('Models (optional)');
    assert.equal(await models.getAttribute('aria-invalid'), 'true');
    assert.equal(await models.getAttribute('aria-describedby'), 'provider-key-models-hint provider-key-models-error');
    assert.equal(await baseUrlError.count(), 0);

    await models.fill('gpt-4o, gpt-4o-mini-*');
    await form.getByRole('button', { name: 'Save key' }).click();
    await form.getByRole('status').waitFor();
    assert.match(await form.getByRole('status').innerText(), /^The azure key default \(\S+\) is saved\.$/);
    const table = page.getByRole('table', { name: 'Provider keys' });
    const row = table.locator('tbody tr', { has: page.getByText('azure', { exact: true }) });
    await row.waitFor();
    const cells = async () => foldedTexts(row.locator('td'));
    const first = await cells();
    assert.match(first[1], /^\S+ default weight 1$/);
    assert.equal(first[2], 'https://contoso.openai.azure.com');
    assert.equal(first[3], 'azure api-version 2024-06-01');
    assert.equal(first[4], 'gpt-4o, gpt-4o-mini-*');

    // "Add a key": the provider as registered, a new key id, the focus on the key field.
    await row.getByRole('button', { name: 'Add a key to azure' }).click();
    assert.equal((await focused(page)).type, 'password');
    assert.equal(await form.getByLabel('Provider').inputValue(), 'azure');
    assert.equal(await form.getByLabel('Key ID (optional)').inputValue(), 'key-2');
    assert.equal(await baseUrl.inputValue(), 'https://contoso.openai.azure.com');
    assert.equal(await apiVersion.inputValue(), '2024-06-01');
    assert.equal(await models.inputValue(), 'gpt-4o, gpt-4o-mini-*');
    await form.getByText('azure is registered').waitFor();
    assert.match(await form.getByRole('note').innerText(), /adds the key key-2/);
    await secret.fill('azure-key-0000000002');
    const weight = form.getByLabel('Weight (optional)');
    const weightError = form.locator('#provider-key-weight-error');
    // No number at all would reach the API as null (the default weight): refused before it is sent.
    await weight.fill('lots');
    await form.getByRole('button', { name: 'Save key' }).click();
    await weightError.waitFor();
    assert.match(await weightError.innerText(), /^weight: give a number above 0/);
    assert.equal(await weight.getAttribute('aria-invalid'), 'true');
    // A number the API refuses: its message, under the same field.
    await weight.fill('0');
    await form.getByRole('button', { name: 'Save key' }).click();
    await form.getByText(/weight is a number above 0/).waitFor();
    await weight.fill('3');
    await form.getByRole('button', { name: 'Save key' }).click();
    await form.getByText(/^The azure key key-2 \(\S+\) is saved\.$/).waitFor();
    const keys = row.getByRole('list', { name: 'Keys of azure' }).locator('li');
    await keys.nth(1).waitFor();
    const listed = await foldedTexts(keys);
    assert.match(listed[0], /^\S+ default weight 1 Delete$/);
    assert.match(listed[1], /^\S+ key-2 weight 3 Delete$/);
    const registered = await session.api('GET', '/api/provider-keys/');
    const azure = registered.body.results.find((r: { provider: string }) => r.provider === 'azure');
    assert.deepEqual(
      [azure.kind, azure.base_url, azure.api_version, azure.models],
      ['azure', 'https://contoso.openai.azure.com', '2024-06-01', ['gpt-4o', 'gpt-4o-mini-*']],
    );
    assert.deepEqual(
      azure.keys.map((k: { key_id: string; weight: number }) => [k.key_id, k.weight]),
      [
        ['default', 1],
        ['key-2', 3],
      ],
    );
    // Several keys: the row's own Delete removes the provider, and says so.
    await row.getByRole('button', { name: 'Delete provider azure' }).waitFor();

    await row.getByRole('button', { name: 'Delete key default of azure' }).click();
    await row.getByRole('button', { name: 'Delete key default', exact: true }).click();
    await keys.nth(1).waitFor({ state: 'detached' });
    assert.match((await keys.allInnerTexts())[0].replace(/\s+/g, ' ').trim(), /^\S+ key-2 weight 3$/);
    const left = await session.api('GET', '/api/provider-keys/');
    const still = left.body.results.find((r: { provider: string }) => r.provider === 'azure');
    assert.deepEqual(
      still.keys.map((k: { key_id: string }) => k.key_id),
      ['key-2'],
    );
    assert.equal(still.api_version, '2024-06-01', 'the provider stays as it was');
    // The openai provider the calls above used is untouched.
    assert.ok(left.body.results.some((r: { provider: string }) => r.provider === 'openai'));

    for (const theme of ['light', 'dark']) {
      await page.getByLabel('Theme').selectOption(theme);
      await page.screenshot({ path: screenshotPath(`settings-cache-${theme}.png`), fullPage: true });
    }
    await page.close();
  });

  it('fits the settings on a phone: no sideways scrolling, each provider a card', async () => {
    const page = await signedIn('?v=settings', { width: 390, height: 844 });
    const table = page.getByRole('table', { name: 'Provider keys' });
    await table.waitFor();
    await page.getByRole('form', { name: 'Response cache defaults' }).waitFor();
    const overflow = await page.evaluate(() => {
      const root = (globalThis as unknown as Doc).document.documentElement;
      return root.scrollWidth - root.clientWidth;
    });
    assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow} px`);
    const row = table.locator('tbody tr').first();
    const box = await row.boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= 390, 'a provider fits the screen');
    await page.screenshot({ path: screenshotPath('settings-cache-phone.png'), fullPage: true });
    await page.close();
  });

  it('ran without a script error or a Content-Security-Policy violation', () => {
    // The API's refusals the forms show (400) are failed calls the browser reports on its console.
    const unexpected = session.problemsExcept(/status of 400/);
    assert.deepEqual(unexpected, []);
  });
});
