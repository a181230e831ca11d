/**
 * The web UI's filter by provider, in Chromium: chat calls proxied through gatelog to two providers
 * (openai, and groq by its models' pattern), then in the log explorer a provider_id filter — added from
 * the filter form, or from the "=" beside the provider in a log's panel — lists that provider's logs
 * only, and the URL keeps the filter.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Page } from 'playwright-core';
import { withoutChromium } from '../support/chromium.js';
import { browserSession, logsGrid, servedProxyApp } from '../support/browser-session.js';
import { columnTexts } from '../support/page-checks.js';

describe('the provider filter in the web UI', { skip: withoutChromium }, () => {
  const session = browserSession({
    start: servedProxyApp,
    seed: async ({ served: { p }, api }) => {
      const res = await api('POST', '/api/provider-keys/', {
        body: { provider: 'groq', api_key: 'gsk-ui-filter-key-0001', base_url: p.fake.baseUrl, models: ['llama-*'] },
      });
      assert.equal(res.status, 201, res.text);
      // Three calls to openai, two to groq, interleaved so that neither provider's rows come in one block.
      for (const model of ['gpt-4o-mini', 'llama-3.1-8b-instant', 'gpt-4o-mini', 'llama-3.3-70b', 'gpt-4o-mini']) {
        await p.client.chat.completions.create({ model, messages: [{ role: 'user', content: `hi ${model}` }] });
      }
      await p.t.flush();
      const listed = await api('GET', '/api/request-logs/list/');
      assert.deepEqual(listed.body.results.map((r: { provider_id: string }) => r.provider_id).sort(), [
        'groq',
        'groq',
        'openai',
        'openai',
        'openai',
      ]);
    },
  });

  async function signedIn(): Promise<Page> {
    const page = await session.signedIn('', { ready: '1–5 of 5 logs' });
    // The provider and model as columns, to read each row's.
    await page.getByText('Columns', { exact: true }).click();
    await page.getByRole('checkbox', { name: 'Provider' }).check();
    await page.getByText('Columns', { exact: true }).click();
    await grid(page).locator('thead th', { hasText: 'Provider' }).waitFor();
    return page;
  }

  const grid = logsGrid;

  /** Each row's text in the named column. */
  const column = (page: Page, name: string) => columnTexts(grid(page), name);

  it('lists only groq’s logs when filtered by provider_id groq from the filter form', async () => {
    const page = await signedIn();
    assert.deepEqual((await column(page, 'Provider')).sort(), ['groq', 'groq', 'openai', 'openai', 'openai']);
    await page.getByLabel('Field').selectOption('provider_id');
    await page.getByLabel('Value').fill('groq');
    await page.getByRole('button', { name: 'Add filter' }).click();
    await page.getByText('1–2 of 2 logs').waitFor();
    assert.deepEqual(await column(page, 'Provider'), ['groq', 'groq']);
    assert.deepEqual((await column(page, 'Model')).sort(), ['llama-3.1-8b-instant', 'llama-3.3-70b']);
    assert.deepEqual(JSON.parse(new URL(page.url()).searchParams.get('filters')!), [
      { field: 'provider_id', operator: '', values: ['groq'] },
    ]);
    // The filter outlives a reload: it is in the URL.
    await page.reload();
    await page.getByText('1–2 of 2 logs').waitFor();
    assert.deepEqual(await column(page, 'Provider'), ['groq', 'groq']);
    await page.close();
  });

  it('lists only openai’s logs when filtered from the provider in a log’s panel', async () => {
    const page = await signedIn();
    const providers = await column(page, 'Provider');
    await grid(page).locator('tbody tr').nth(providers.indexOf('openai')).click();
    const dialog = page.getByRole('dialog', { name: 'Log detail' });
    await dialog.getByRole('button', { name: 'Only provider_id openai' }).click();
    await page.getByText('1–3 of 3 logs').waitFor();
    assert.deepEqual(await column(page, 'Provider'), ['openai', 'openai', 'openai']);
    assert.deepEqual(await column(page, 'Model'), ['gpt-4o-mini', 'gpt-4o-mini', 'gpt-4o-mini']);
    assert.deepEqual(JSON.parse(new URL(page.url()).searchParams.get('filters')!), [
      { field: 'provider_id', operator: '', values: ['openai'] },
    ]);
    await page.close();
    assert.deepEqual(session.problems, []);
  });
});
