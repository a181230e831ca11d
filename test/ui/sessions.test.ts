/**
 * The web UI's Sessions page in a real browser (Debian's Chromium through playwright-core) against a real
 * gatelog and its database: the sessions of the window as rows with their exact numbers (a key with an
 * owner read as that developer, the others by key name), sorted by cost on the server, paged, filtered
 * with the explorer's filter bar; a session opened at its own URL as a timeline of its calls, oldest
 * first, with each call's cost, the session's totals, its answers' tool calls, what a call sent (a tool's
 * result, in Anthropic's shape too) read when the call is opened, and a link to its calls in the explorer.
 * Screenshots go to GATELOG_UI_SCREENSHOTS (default: a temporary directory).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { withoutChromium } from '../support/chromium.js';
import { browserSession, screenshotPath } from '../support/browser-session.js';
import { columnTexts, documentWidths, foldedTexts } from '../support/page-checks.js';
import { toolCallTurn } from '../support/chat-messages.js';

const MINUTE = 60_000;

/** A call of a session through the logging API, `ago` minutes before the suite's start. */
function call(now: number, thread: string, ago: number, fields: Record<string, unknown>) {
  return {
    thread_identifier: thread,
    usage: { prompt_tokens: 100, completion_tokens: 10 },
    latency: 2,
    timestamp: new Date(now - ago * MINUTE).toISOString(),
    ...fields,
  };
}

const SYSTEM = { role: 'system', content: 'You are a coding agent.' };
const ASK = { role: 'user', content: 'Fix the failing test in parser.ts' };
const READ = toolCallTurn('call_1', 'read_file', '{"path":"parser.ts"}');
const FILE = { role: 'tool', tool_call_id: 'call_1', content: 'export function parse() { return 41; }' };

/**
 * The agent's session, by the developer's key: four calls over ten minutes — it reads a file (the file
 * sent back as a tool result), runs the tests (a call that failed, then a retry), and answers; the last
 * call's history in Anthropic's shape (tool_use and tool_result blocks). $0.047, 1 error.
 */
function agentSession(now: number) {
  const RUN = {
    role: 'assistant',
    content: [{ type: 'tool_use', id: 'toolu_2', name: 'run_tests', input: { file: 'parser.test.ts' } }],
  };
  const RESULT = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_2', content: '3 passed' }] };
  return [
    call(now, 'sess-agent', 30, {
      model: 'claude-sonnet-4-5',
      input: [SYSTEM, ASK],
      output: READ,
      cost: 0.012,
      usage: { prompt_tokens: 1000, completion_tokens: 50 },
    }),
    call(now, 'sess-agent', 28, {
      model: 'claude-sonnet-4-5',
      input: [SYSTEM, ASK, READ, FILE],
      output: {
        role: 'assistant',
        content: 'The parser returns 41; fixing it.',
        tool_calls: [
          { id: 'call_2', type: 'function', function: { name: 'edit_file', arguments: '{"path":"parser.ts"}' } },
        ],
      },
      cost: 0.015,
      usage: { prompt_tokens: 1200, completion_tokens: 60 },
    }),
    call(now, 'sess-agent', 25, {
      model: 'claude-haiku-4-5',
      input: [SYSTEM, ASK, READ, FILE],
      status_code: 500,
      error_message: 'Upstream said: overloaded',
      cost: 0,
      usage: { prompt_tokens: 0, completion_tokens: 0 },
    }),
    call(now, 'sess-agent', 20, {
      model: 'claude-sonnet-4-5',
      input: [SYSTEM, ASK, RUN, RESULT],
      output: { role: 'assistant', content: 'The test passes now.' },
      cost: 0.02,
      usage: { prompt_tokens: 1500, completion_tokens: 40 },
    }),
  ];
}

/** A chat of two turns by the suite's own key (no owner), the costliest: $1.00. And the latest session. */
function otherSessions(now: number) {
  return [
    call(now, 'sess-chat', 50, {
      model: 'gpt-4o',
      input: [{ role: 'user', content: 'Summarise the report' }],
      output: { role: 'assistant', content: 'It says sales grew.' },
      cost: 0.5,
    }),
    call(now, 'sess-chat', 45, {
      model: 'gpt-4o',
      input: [{ role: 'user', content: 'And costs?' }],
      output: { role: 'assistant', content: 'They fell.' },
      cost: 0.5,
    }),
    call(now, 'sess-small', 5, {
      model: 'gpt-4o-mini',
      input: [{ role: 'user', content: 'hi' }],
      output: { role: 'assistant', content: 'hello' },
      cost: 0.001,
    }),
    // Outside any session: not listed.
    { model: 'gpt-4o', input: [{ role: 'user', content: 'alone' }], cost: 9, timestamp: new Date(now).toISOString() },
  ];
}

/** 51 one-call sessions two days back, bulk-00 the oldest: the 7-day window holds 54 sessions. */
function bulkSessions(now: number) {
  return Array.from({ length: 51 }, (_, i) =>
    call(now, `bulk-${String(i).padStart(2, '0')}`, 2 * 24 * 60 - i, { model: 'gpt-4o-mini', cost: 0.0001 }),
  );
}

describe('web UI sessions in Chromium', { skip: withoutChromium }, () => {
  const now = Date.now();
  let ownKeyName = '';
  const session = browserSession({
    seed: async (s) => {
      ownKeyName = (await s.api('GET', '/api/keys/current/')).body.name as string;
      // The developer's own key, with an owner: its sessions read as hers.
      const dev = await s.api('POST', '/api/keys/', {
        body: {
          name: 'dev-7',
          scopes: ['ingest'],
          owner: { email: 'developer-one@example.com', first_name: 'Developer', last_name: 'One' },
        },
      });
      assert.equal(dev.status, 201, dev.text);
      await s.seedLogs(agentSession(now), dev.body.key as string);
      await s.seedLogs([...otherSessions(now), ...bulkSessions(now)]);
    },
  });

  const signedIn = (query: string, viewport = { width: 1280, height: 900 }, theme = 'light') =>
    session.signedIn(query, {
      viewport,
      theme,
      ready: (page) => page.getByRole('link', { name: 'Sessions', exact: true }),
    });
  const table = (page: Page) => page.getByRole('table', { name: 'Sessions' });
  const summary = (page: Page, text: string) => page.locator('.summary').getByText(text, { exact: true }).waitFor();
  const query = (page: Page) => new URL(page.url()).searchParams;
  /** The sessions page on `query`, once `shown` (its summary line) reads. */
  async function sessions(q: string, shown: string, viewport?: { width: number; height: number }, theme?: string) {
    const page = await signedIn(q, viewport, theme);
    await summary(page, shown);
    return page;
  }

  it('lists the sessions of the window with their numbers, the developer an owner’s name', async () => {
    const page = await signedIn('');
    await page.getByRole('link', { name: 'Sessions', exact: true }).click();
    await summary(page, '1–3 of 3 sessions');
    assert.equal(query(page).get('v'), 'sessions');
    assert.ok(query(page).get('at'), 'the relative window is anchored');
    assert.equal(await page.getByRole('link', { name: 'Sessions', exact: true }).getAttribute('aria-current'), 'page');
    const t = table(page);
    // The latest active first.
    assert.deepEqual(await columnTexts(t, 'Session'), ['sess-small', 'sess-agent', 'sess-chat']);
    assert.deepEqual(await columnTexts(t, 'Developer'), [ownKeyName, 'Developer One', ownKeyName]);
    assert.deepEqual(await columnTexts(t, 'Models'), ['gpt-4o-mini', 'claude-haiku-4-5, claude-sonnet-4-5', 'gpt-4o']);
    assert.deepEqual(await columnTexts(t, 'Calls'), ['1', '4', '2']);
    assert.deepEqual(await columnTexts(t, 'Errors'), ['0', '1', '0']);
    assert.deepEqual(await columnTexts(t, 'Cost'), ['$0.00100', '$0.0470', '$1.00']);
    assert.deepEqual(await columnTexts(t, 'Duration'), ['0 ms', '10 min', '5 min']);
    // Each last call's instant, on hover and in the time element.
    const lastSeen = await t.locator('tbody time').evaluateAll((times) => times.map((e) => e.getAttribute('datetime')));
    assert.deepEqual(
      lastSeen,
      [5, 20, 45].map((ago) => new Date(now - ago * MINUTE).toISOString()),
    );
    await page.screenshot({ path: screenshotPath('sessions-list-light.png'), fullPage: true });
    await page.close();
  });

  it('sorts by cost on the server, both ways, and keeps the order in the URL', async () => {
    const page = await sessions('?v=sessions', '1–3 of 3 sessions');
    const t = table(page);
    // Every state the page draws while the order changes: a header never claims an order its rows lack.
    await page.evaluate(`
      window.drawnUnderCost = [];
      new MutationObserver(() => {
        const th = [...document.querySelectorAll('th[aria-sort=descending]')].find((h) => h.textContent.includes('Cost'));
        if (th) window.drawnUnderCost.push([...th.closest('table').querySelectorAll('tbody tr')].map((r) => r.cells[0].innerText.trim()).join(', '));
      }).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
    `);
    await t.getByRole('button', { name: 'Cost' }).click();
    await page.waitForURL(/sort=-cost/);
    await t.locator('th[aria-sort=descending]').getByText('Cost').waitFor();
    assert.deepEqual(await columnTexts(t, 'Session'), ['sess-chat', 'sess-agent', 'sess-small']);
    const drawn = (await page.evaluate('window.drawnUnderCost')) as string[];
    assert.deepEqual(
      [...new Set(drawn)],
      ['sess-chat, sess-agent, sess-small'],
      'the rows under "Cost, costliest first"',
    );
    await t.getByRole('button', { name: /Cost/ }).click();
    await page.waitForURL(/sort=cost/);
    await t.locator('th[aria-sort=ascending]').getByText('Cost').waitFor();
    assert.deepEqual(await columnTexts(t, 'Session'), ['sess-small', 'sess-agent', 'sess-chat']);
    // A reload shows the same order; Last seen goes back to the latest first.
    await page.reload();
    await t.locator('th[aria-sort=ascending]').getByText('Cost').waitFor();
    assert.deepEqual(await columnTexts(t, 'Session'), ['sess-small', 'sess-agent', 'sess-chat']);
    await t.getByRole('button', { name: /Last seen/ }).click();
    await t.locator('th[aria-sort=descending]').getByText('Last seen').waitFor();
    assert.deepEqual(await columnTexts(t, 'Session'), ['sess-small', 'sess-agent', 'sess-chat']);
    assert.equal(query(page).get('sort'), null, 'the default order is not written');
    await page.close();
  });

  it('pages through a wider window, the page in the URL', async () => {
    const page = await sessions('?v=sessions&range=7d', '1–50 of 54 sessions');
    assert.equal(await table(page).locator('tbody tr').count(), 50);
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('button', { name: 'Next' }).click();
    await summary(page, '51–54 of 54 sessions');
    assert.equal(query(page).get('page'), '2');
    assert.deepEqual(await columnTexts(table(page), 'Session'), ['bulk-03', 'bulk-02', 'bulk-01', 'bulk-00']);
    await page.goBack();
    await summary(page, '1–50 of 54 sessions');
    await page.close();
  });

  it('filters with the explorer’s filter bar: the filter in the URL, the calls it counts', async () => {
    const page = await sessions('?v=sessions', '1–3 of 3 sessions');
    const form = page.getByRole('form', { name: 'Add a filter' });
    await form.getByLabel('Field').selectOption('model');
    await form.getByLabel('Value').fill('claude-sonnet-4-5');
    await form.getByRole('button', { name: 'Add filter' }).click();
    await summary(page, '1–1 of 1 session');
    assert.deepEqual(JSON.parse(query(page).get('filters')!), [
      { field: 'model', operator: '', values: ['claude-sonnet-4-5'] },
    ]);
    // Only the matching calls are counted: three of the agent's four, none failed.
    assert.deepEqual(await columnTexts(table(page), 'Calls'), ['3']);
    assert.deepEqual(await columnTexts(table(page), 'Errors'), ['0']);
    assert.deepEqual(await columnTexts(table(page), 'Cost'), ['$0.0470']);
    await page
      .getByRole('list', { name: 'Active filters (all must hold)' })
      .getByText('model is claude-sonnet-4-5')
      .waitFor();

    // Opened, the session shows the calls the filter matched, and every call on demand.
    await table(page).getByRole('link', { name: 'sess-agent' }).click();
    const calls = page.getByRole('list', { name: 'Calls' }).getByRole('listitem', { name: /^Call \d+$/ });
    await calls.first().waitFor();
    assert.equal(await calls.count(), 3);
    await page.getByRole('button', { name: 'Show every call of the session' }).click();
    await page.getByRole('listitem', { name: 'Call 4' }).waitFor();
    assert.equal(await calls.count(), 4);
    assert.equal(query(page).get('filters'), null);
    await page.close();
  });

  it('opens a session as a timeline of its calls, oldest first, with its totals', async () => {
    const page = await sessions('?v=sessions', '1–3 of 3 sessions');
    // A click anywhere on the row opens it.
    await table(page).locator('tbody tr').nth(1).locator('td').nth(2).click();
    await page.getByRole('heading', { name: /Session/ }).waitFor();
    assert.equal(query(page).get('session'), 'sess-agent');
    const tile = (name: string) =>
      page.getByRole('list', { name: 'Totals' }).getByRole('listitem', { name, exact: true });
    await tile('Calls').waitFor();
    assert.equal(await tile('Calls').locator('.value').innerText(), '4');
    assert.match(await tile('Calls').innerText(), /1 failed/);
    assert.equal(await tile('Cost').locator('.value').innerText(), '$0.0470');
    assert.equal(await tile('Tokens').locator('.value').innerText(), '3,850');
    assert.match(await tile('Tokens').innerText(), /3,700 in, 150 out/);
    assert.equal(await tile('Duration').locator('.value').innerText(), '10 min');
    assert.equal(await tile('Developer').locator('.value').innerText(), 'Developer One');
    assert.equal(await tile('Models').locator('.value').innerText(), 'claude-haiku-4-5, claude-sonnet-4-5');

    const calls = page.getByRole('list', { name: 'Calls' }).getByRole('listitem', { name: /^Call \d+$/ });
    await calls.first().waitFor();
    assert.equal(await calls.count(), 4);
    const costs = await calls.locator('.call-cost').allInnerTexts();
    assert.deepEqual(costs, ['$0.0120', '$0.0150', '$0', '$0.0200']);
    const models = await calls.locator('.call-model').allInnerTexts();
    assert.deepEqual(models, ['claude-sonnet-4-5', 'claude-sonnet-4-5', 'claude-haiku-4-5', 'claude-sonnet-4-5']);
    const times = await calls.locator('.call-head time').evaluateAll((e) => e.map((t) => t.getAttribute('datetime')));
    assert.deepEqual(
      times,
      [30, 28, 25, 20].map((ago) => new Date(now - ago * MINUTE).toISOString()),
    );
    const [first, second, failed, last] = [1, 2, 3, 4].map((n) => page.getByRole('listitem', { name: `Call ${n}` }));
    // The user's prompt, once; each answer with its tool calls; the failure's message.
    await first.getByText('Fix the failing test in parser.ts').waitFor();
    assert.equal(await second.locator('.call-prompt').count(), 0, 'the same prompt is not repeated');
    await first.getByText('read_file({"path":"parser.ts"})').waitFor();
    await second.getByText('The parser returns 41; fixing it.').waitFor();
    await second.getByText('edit_file({"path":"parser.ts"})').waitFor();
    await failed.getByText('Upstream said: overloaded').waitFor();
    assert.equal(await failed.locator('.status').innerText(), '500');
    await last.getByText('The test passes now.').waitFor();

    // Opened, a call shows what it sent: the file read, sent back as a tool result…
    await second.getByRole('button', { name: /what it sent/ }).click();
    const sent = second.getByRole('list', { name: 'Sent by call 2' });
    // (The role reads in capitals, as the log panel writes it.)
    assert.deepEqual(await foldedTexts(sent.getByRole('listitem')), ['TOOL export function parse() { return 41; }']);
    // …in Anthropic's shape too (a user message of tool_result blocks), and its whole log.
    await last.getByRole('button', { name: /what it sent/ }).click();
    assert.deepEqual(await foldedTexts(last.getByRole('list', { name: 'Sent by call 4' }).getByRole('listitem')), [
      'TOOL 3 passed',
    ]);
    await last.getByText('The whole log', { exact: true }).click();
    await last.getByText('run_tests({"file":"parser.test.ts"})').first().waitFor();
    await page.screenshot({ path: screenshotPath('sessions-timeline-light.png'), fullPage: true });

    // The session's calls in the explorer: its window, filtered to its thread.
    const at = query(page).get('at');
    await page.getByRole('link', { name: 'Open its calls in the explorer' }).click();
    await page.getByText('1–4 of 4 logs').waitFor();
    assert.equal(query(page).get('v'), null, 'the explorer');
    assert.deepEqual(JSON.parse(query(page).get('filters')!), [
      { field: 'thread_identifier', operator: '', values: ['sess-agent'] },
    ]);
    assert.equal(query(page).get('at'), at);

    // Back, and back to the list as it was.
    await page.goBack();
    await page.getByRole('listitem', { name: 'Call 4' }).waitFor();
    await page.getByRole('link', { name: '← Sessions' }).click();
    await summary(page, '1–3 of 3 sessions');
    assert.equal(query(page).get('session'), null);
    await page.close();
  });

  it('reads on a phone in the dark: no page wider than the screen', async () => {
    const phone = { width: 390, height: 844 };
    const page = await sessions('?v=sessions', '1–3 of 3 sessions', phone, 'dark');
    let widths = await documentWidths(page);
    assert.ok(widths.scroll <= widths.client, `the list fits: ${JSON.stringify(widths)}`);
    await page.screenshot({ path: screenshotPath('sessions-list-phone-dark.png'), fullPage: true });
    await table(page).getByRole('link', { name: 'sess-agent' }).click();
    await page.getByRole('listitem', { name: 'Call 4' }).waitFor();
    widths = await documentWidths(page);
    assert.ok(widths.scroll <= widths.client, `the timeline fits: ${JSON.stringify(widths)}`);
    await page.screenshot({ path: screenshotPath('sessions-timeline-phone-dark.png'), fullPage: true });
    await page.close();
  });

  it('met no script error on the way', () => {
    assert.deepEqual(session.problems, []);
  });
});
