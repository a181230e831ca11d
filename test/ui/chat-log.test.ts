/**
 * A streamed chat completion proxied through gatelog (the official openai client, the fake provider)
 * read in the web UI in Chromium: the log panel shows the conversation as its messages — system, user
 * and the streamed answer — with the stream's time to first token and pace.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withoutChromium } from '../support/chromium.js';
import { browserSession, logsGrid, servedProxyApp } from '../support/browser-session.js';
import { columnIndex, foldedTexts } from '../support/page-checks.js';
import { logNamedBy } from '../support/proxy-app.js';

describe('a streamed chat in the web UI', { skip: withoutChromium }, () => {
  let logId: string;
  const session = browserSession({
    start: servedProxyApp,
    seed: async ({ served: { p } }) => {
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
    },
  });

  it('shows the messages, that it was streamed, its time to first token and tokens per second', async () => {
    const page = await session.signedIn('', { ready: '1–1 of 1 log' });
    await logsGrid(page).locator('tbody tr').first().click();
    const dialog = page.getByRole('dialog', { name: 'Log detail' });
    const messages = dialog.getByRole('region', { name: 'Messages' }).locator('li');
    const said = await foldedTexts(messages);
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
    assert.deepEqual(session.problems, []);
  });

  it('gates a 2 MB message behind its beginning, drawn whole only when asked for', async () => {
    const huge = `start of a long paste ${'lorem ipsum '.repeat(180_000)} end of it`;
    const logged = await session.api('POST', '/api/request-logs/', {
      body: {
        model: 'gpt-4o',
        // Older than the proxied call: the table's first row stays that call's.
        timestamp: new Date(Date.now() - 10 * 60_000).toISOString(),
        prompt_messages: [{ role: 'user', content: huge }],
        completion_message: { role: 'assistant', content: 'Too long to read.' },
      },
    });
    assert.equal(logged.status, 201, logged.text);
    await session.t.flush();
    const page = await session.signedIn(`?log=${logged.body.unique_id}`);
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
    const page = await session.signedIn();
    const grid = logsGrid(page);
    await grid.locator('tbody tr').first().waitFor();
    await page.getByText('Columns', { exact: true }).click();
    await page.getByRole('checkbox', { name: 'Provider' }).check();
    await grid.locator('thead th', { hasText: 'Provider' }).waitFor();
    const column = await columnIndex(grid, 'Provider');
    const cell = grid.locator('tbody tr').first().locator('td').nth(column);
    assert.equal((await cell.innerText()).trim(), 'openai');
  });
});
