/**
 * The web UI's trace view in Chromium: from a log's panel to its trace's tree (spans under their parents,
 * bars on the trace's time axis, calls and failures marked), from a span back to its log; light and dark,
 * a phone's width; no script error or CSP violation.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withoutChromium } from '../support/chromium.js';
import { browserSession, screenshotPath } from '../support/browser-session.js';
import { documentWidths } from '../support/page-checks.js';
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

/** A trace of four spans: a workflow over an agent, which made a model call and a tool call that failed. */
function traceLogs(now: number) {
  const at = (ms: number) => new Date(now - 60_000 + ms).toISOString();
  const span = (id: string, parent: string | null, name: string, type: string, start: number, end: number) => ({
    log_type: type,
    trace_unique_id: TRACE,
    span_unique_id: id,
    span_parent_id: parent,
    span_name: name,
    span_workflow_name: 'handle-ticket',
    start_time: at(start),
    timestamp: at(end),
    latency: (end - start) / 1000,
  });
  return [
    span('a000000000000001', null, 'handle-ticket', 'workflow', 0, 2000),
    span('a000000000000002', 'a000000000000001', 'support-agent', 'agent', 100, 1900),
    {
      ...span('a000000000000003', 'a000000000000002', 'draft-reply', 'chat', 200, 1200),
      model: 'gpt-4o-mini',
      input: [{ role: 'user', content: 'Where is my parcel?' }],
      output: { role: 'assistant', content: 'On its way.' },
      usage: { prompt_tokens: 30, completion_tokens: 8 },
      metadata: { step: 'drafting' },
    },
    {
      ...span('a000000000000004', 'a000000000000002', 'lookup-order', 'tool', 1300, 1800),
      status_code: 500,
      error_message: 'timeout',
    },
  ];
}

describe('web UI trace view in Chromium', { skip: withoutChromium }, () => {
  let chatId: string;
  const session = browserSession({
    seed: async (s) => {
      chatId = (await s.seedLogs(traceLogs(Date.now())))[2];
    },
  });

  const signedIn = (query: string, theme = 'light', viewport = { width: 1280, height: 900 }) =>
    session.signedIn(query, { theme, viewport });

  it("goes from a log's panel to its trace, shown as a tree on a time axis, and back to a span's log", async () => {
    const page = await signedIn(`?log=${chatId}`);
    const link = page.getByRole('link', { name: 'draft-reply · view the trace' });
    await link.click();
    await page.getByRole('heading', { name: 'Trace' }).waitFor();
    assert.match(page.url(), new RegExp(`v=trace&id=${TRACE}`));
    const items = page.getByRole('treeitem');
    await items.nth(3).waitFor();
    const rows = await items.evaluateAll((lis) =>
      lis.map((li) => ({
        level: li.getAttribute('aria-level'),
        text: (li.querySelector('.trace-name')?.textContent ?? '').trim(),
        classes: li.querySelector('button')?.className ?? '',
        left: (li.querySelector('.trace-bar') as unknown as { style: { left: string } } | null)?.style.left ?? '',
      })),
    );
    assert.deepEqual(
      rows.map((r) => [r.level, r.text]),
      [
        ['1', 'workflow handle-ticket'],
        ['2', 'agent support-agent'],
        ['3', 'chat draft-reply · gpt-4o-mini'],
        ['3', 'tool lookup-order'],
      ],
    );
    assert.match(rows[2]!.classes, /\bcall\b/, 'the model call is marked');
    assert.match(rows[3]!.classes, /\bfailed\b/, 'the failed tool call is marked');
    assert.equal(rows[0]!.left, '0%');
    assert.equal(rows[3]!.left, '65%', 'the tool call starts 1.3 s into a 2 s trace');
    await page.getByText(/4 spans, 1 model calls/).waitFor();

    // A span's click shows it beside the tree, without leaving the trace: input, output, metadata.
    const url = page.url();
    await page.getByRole('button', { name: /draft-reply/ }).click();
    const span = page.getByRole('region', { name: 'Span' });
    await span.getByRole('heading', { name: 'draft-reply' }).waitFor();
    await span.getByText('Where is my parcel?').first().waitFor();
    await span.getByText('On its way.').first().waitFor();
    await span.getByRole('rowheader', { name: 'step' }).waitFor();
    assert.equal(page.url(), url, 'still on the trace');
    await page.getByRole('heading', { name: 'Trace' }).waitFor();
    const [tree, beside] = await Promise.all([
      page.getByRole('tree', { name: 'Spans' }).boundingBox(),
      span.boundingBox(),
    ]);
    assert.ok(tree && beside && beside.x >= tree.x + tree.width - 1, 'the span is beside the tree');
    assert.equal(await page.getByRole('treeitem', { selected: true }).count(), 1);
    await page.getByRole('button', { name: /lookup-order/ }).click();
    await span.getByText('timeout').first().waitFor();
    // And from there to the explorer.
    await span.getByRole('button', { name: 'Open in the explorer' }).click();
    await page.getByRole('dialog').getByText('timeout').first().waitFor();
    assert.match(page.url(), /log=/);
  });

  it('fits a phone and both themes', async () => {
    for (const theme of ['light', 'dark']) {
      const page = await signedIn(`?v=trace&id=${TRACE}`, theme);
      await page.getByRole('treeitem').nth(3).waitFor();
      await page.screenshot({ path: screenshotPath(`trace-${theme}.png`), fullPage: true });
      await page.close();
    }
    const phone = await signedIn(`?v=trace&id=${TRACE}`, 'light', { width: 390, height: 800 });
    await phone.getByRole('treeitem').nth(3).waitFor();
    const width = await documentWidths(phone);
    assert.ok(width.scroll <= width.client, `no sideways scrolling: ${width.scroll} > ${width.client}`);
    await phone.screenshot({ path: screenshotPath('trace-phone.png'), fullPage: true });
  });

  it('ran without a script error or a Content-Security-Policy violation', () => {
    assert.deepEqual(session.problems, []);
  });
});
