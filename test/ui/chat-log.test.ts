/**
 * A streamed chat completion proxied through gatelog (the official openai client, the fake provider)
 * read in the web UI in Chromium: the log panel shows the conversation as its messages — system, user
 * and the streamed answer — with the stream's time to first token and pace.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser } from 'playwright-core';
import { launchChromium, withoutChromium } from '../support/chromium.js';
import { api } from '../support/harness.js';
import { logNamedBy, type ProxyTestApp, startProxyApp } from '../support/proxy-app.js';

describe('a streamed chat in the web UI', { skip: withoutChromium }, () => {
  let p: ProxyTestApp;
  let browser: Browser;
  let logId: string;

  before(async () => {
    p = await startProxyApp();
    // The first token 300 ms after the headers: the log's time to first token reads at least that.
    p.fake.chat({ choices: [{ content: ['Paris', ' is', ' the', ' capital.'] }], firstEventDelayMs: 300 });
    const stream = await p.client.chat.completions
      .create({
        model: 'gpt-4o-mini',
        stream: true,
        messages: [
          { role: 'system', content: 'Answer in one sentence.' },
          { role: 'user', content: 'What is the capital of France?' },
        ],
      })
      .withResponse();
    let text = '';
    for await (const chunk of stream.data) text += chunk.choices[0]?.delta?.content ?? '';
    assert.equal(text, 'Paris is the capital.');
    const log = await logNamedBy(p, stream.response.headers.get('x-gatelog-log-id'));
    assert.equal(log.stream, true);
    assert.ok(log.time_to_first_token >= 0.3, `time to first token ${log.time_to_first_token}`);
    logId = log.unique_id;
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await p?.close();
  });

  it('shows the messages, that it was streamed, its time to first token and tokens per second', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(`${p.t.baseUrl}/ui/`);
    await page.getByLabel('API key').fill(p.a.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('1–1 of 1 log').waitFor();
    await page.getByRole('grid', { name: 'Logs' }).locator('tbody tr').first().click();
    const dialog = page.getByRole('dialog', { name: 'Log detail' });
    const messages = dialog.getByRole('region', { name: 'Messages' }).locator('li');
    await messages.first().waitFor();
    const said = (await messages.allInnerTexts()).map((m) => m.replace(/\s+/g, ' ').trim());
    assert.deepEqual(said, [
      'SYSTEM Answer in one sentence.',
      'USER What is the capital of France?',
      'ASSISTANT Paris is the capital.',
    ]);
    // The facts as the panel writes them; a filterable value carries its = and ≠ buttons.
    const facts = (await dialog.locator('dl.facts').innerText()).replace(/\n=\n≠\n/g, '\n');
    assert.match(facts, /\nType\nchat\n · streamed\n/);
    assert.match(facts, /\nProvider\nopenai\n/);
    const ttft = /\nTime to first token\n(\d+) ms\n/.exec(facts);
    assert.ok(ttft && Number(ttft[1]) >= 300, facts);
    const pace = /\nTokens per second\n([\d.]+)/.exec(facts);
    assert.ok(pace && Number(pace[1]) > 0, facts);
    assert.equal(new URL(page.url()).searchParams.get('log'), logId);
    assert.deepEqual(problems, []);
  });

  it('gates a 2 MB message behind its beginning, drawn whole only when asked for', async () => {
    const huge = `start of a long paste ${'lorem ipsum '.repeat(180_000)} end of it`;
    const logged = await api(p.t.baseUrl, 'POST', '/api/request-logs/', {
      key: p.a.key,
      body: {
        model: 'gpt-4o',
        // Older than the proxied call: the table's first row stays that call's.
        timestamp: new Date(Date.now() - 10 * 60_000).toISOString(),
        prompt_messages: [{ role: 'user', content: huge }],
        completion_message: { role: 'assistant', content: 'Too long to read.' },
      },
    });
    assert.equal(logged.status, 201, logged.text);
    await p.t.flush();
    const page = await browser.newPage();
    await page.goto(`${p.t.baseUrl}/ui/?log=${logged.body.unique_id}`);
    await page.getByLabel('API key').fill(p.a.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const messages = page.getByRole('dialog', { name: 'Log detail' }).getByRole('region', { name: 'Messages' });
    await messages.getByText('Too long to read.').waitFor();
    await messages.getByText(/Large: 2\.2 M characters/).waitFor();
    assert.ok((await messages.innerText()).length < 10_000, 'only the beginning is drawn');
    // The raw input is not drawn either until asked for.
    const dialog = page.getByRole('dialog', { name: 'Log detail' });
    assert.ok((await dialog.innerText()).length < 20_000, 'the panel draws no whole copy of the message');
    await messages.getByRole('button', { name: 'Show all' }).click();
    await messages.getByText(/end of it/).waitFor();
    await page.close();
  });

  it('shows the provider as a column when chosen', async () => {
    const page = await browser.newPage();
    await page.goto(`${p.t.baseUrl}/ui/`);
    await page.getByLabel('API key').fill(p.a.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const grid = page.getByRole('grid', { name: 'Logs' });
    await grid.locator('tbody tr').first().waitFor();
    await page.getByText('Columns', { exact: true }).click();
    await page.getByRole('checkbox', { name: 'Provider' }).check();
    await grid.locator('thead th', { hasText: 'Provider' }).waitFor();
    const headers = await grid.locator('thead th').allInnerTexts();
    const column = headers.findIndex((h) => h.trim() === 'Provider');
    const cell = grid.locator('tbody tr').first().locator('td').nth(column);
    assert.equal((await cell.innerText()).trim(), 'openai');
  });
});
