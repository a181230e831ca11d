/**
 * The dashboard and the explorer's chart strip in a real browser (Debian's Chromium through
 * playwright-core) against a real gatelog: the totals and top-N tables show the numbers of the seeded
 * logs, a top model and a chart's bucket open the explorer filtered to them, a drag across the strip or a
 * dashboard chart sets the time range in the URL, the dashboard fits a phone in both themes; its top-N
 * tables sort by any column (models ranked by cost, the order kept through a refresh), cost by model is
 * charted beside requests by model, a 7-day axis reads dates, and a trace's spans are not counted as
 * requests (of model "(none)"); no script error or Content-Security-Policy violation on the way (uPlot,
 * loaded lazily, styles through the DOM).
 * Screenshots go to GATELOG_UI_SCREENSHOTS (default: a temporary directory).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Locator, type Page } from 'playwright-core';
import { withoutChromium } from '../support/chromium.js';
import { browserSession, screenshotPath } from '../support/browser-session.js';
import { documentWidths, holds } from '../support/page-checks.js';

/**
 * 40 logs over the last 40 minutes: alpha-model 20 at $0.25 (acme), beta-model 15 at $0.10 of which 3
 * failed (globex), gamma-model 5 at $0.02 (acme); 10 prompt and 5 completion tokens each.
 * Totals: 40 requests, 3 errors (7.5%), $6.60, 600 tokens.
 */
function seededLogs(now: number) {
  return Array.from({ length: 40 }, (_, i) => {
    const model = i < 20 ? 'alpha-model' : i < 35 ? 'beta-model' : 'gamma-model';
    return {
      model,
      input: [{ role: 'user', content: `question ${i}` }],
      output: { role: 'assistant', content: `answer ${i}` },
      usage: { prompt_tokens: 10, completion_tokens: 5 },
      customer_identifier: model === 'beta-model' ? 'globex' : 'acme',
      status_code: i >= 20 && i < 23 ? 500 : 200,
      cost: model === 'alpha-model' ? 0.25 : model === 'beta-model' ? 0.1 : 0.02,
      latency: 0.5 + (i % 10) / 10,
      time_to_first_token: 0.1 + (i % 5) / 10,
      timestamp: new Date(now - (40 - i) * 60_000).toISOString(),
    };
  });
}

/**
 * Three days back, outside the default hour: delta-model, 2 calls at $2.00 (few but costly), and a
 * trace's spans through the logging API — a workflow, a task and a tool without a model, and an agent
 * span naming alpha-model (as GenAI agent spans do). Over 7 days: 42 model calls; by cost alpha ($5.00),
 * delta ($4.00), beta ($1.50), gamma ($0.10), by requests alpha, beta, gamma, delta.
 */
function olderLogs(now: number) {
  const at = (minutes: number) => new Date(now - 3 * 86_400_000 + minutes * 60_000).toISOString();
  return [
    ...[0, 1].map((i) => ({
      model: 'delta-model',
      input: [{ role: 'user', content: `costly question ${i}` }],
      output: { role: 'assistant', content: `costly answer ${i}` },
      customer_identifier: 'acme',
      cost: 2,
      latency: 3,
      timestamp: at(i + 1),
    })),
    { log_type: 'workflow', span_name: 'support-run', latency: 4, timestamp: at(5) },
    { log_type: 'task', span_name: 'plan', latency: 1, timestamp: at(4) },
    { log_type: 'tool', span_name: 'search_docs', latency: 0.2, timestamp: at(3) },
    { log_type: 'agent', span_name: 'helper', model: 'alpha-model', latency: 3.5, timestamp: at(5) },
  ];
}

describe('web UI dashboard and chart strip in Chromium', { skip: withoutChromium }, () => {
  const session = browserSession({
    seed: async (s) => {
      // The key that writes the logs has an owner: the top keys read as that developer.
      const current = await s.api('GET', '/api/keys/current/');
      const owned = await s.api('PATCH', `/api/keys/${current.body.id}/`, {
        body: { owner: { email: 'developer-one@example.com', first_name: 'Developer', last_name: 'One' } },
      });
      assert.equal(owned.status, 200, owned.text);
      await s.seedLogs([...seededLogs(Date.now()), ...olderLogs(Date.now())]);
    },
  });

  /** A page signed in on `query`, in `theme`, at `viewport`. */
  const signedIn = (query: string, theme = 'light', viewport = { width: 1280, height: 900 }, as = session.key) =>
    session.signedIn(query, {
      theme,
      viewport,
      key: as,
      ready: (page) => page.getByRole('link', { name: 'Dashboard', exact: true }),
    });

  /** The dashboard with its numbers and every chart drawn. */
  async function dashboard(theme = 'light', viewport?: { width: number; height: number }): Promise<Page> {
    const page = await signedIn('?v=dashboard', theme, viewport);
    await tile(page, 'Requests').getByText('40', { exact: true }).waitFor();
    for (const id of CHARTS) await page.locator(`[data-testid=${id}] canvas`).waitFor();
    return page;
  }

  const CHARTS = [
    'chart-requests',
    'chart-cost',
    'chart-tokens',
    'chart-latency',
    'chart-ttft',
    'chart-models',
    'chart-model-costs',
  ];
  /** The explorer's filter for the logs the dashboard counts: model calls, not a trace's spans. */
  const MODEL_CALLS = {
    field: 'log_type',
    operator: 'in',
    values: ['chat', 'completion', 'text', 'response', 'embedding', 'transcription', 'speech'],
  };
  /** The labels of a chart's time axis (drawn on its canvas; said in words for a screen reader). */
  async function axisLabels(page: Page, id: string): Promise<string[]> {
    const text = await page.locator(`[data-testid=${id}] p`).textContent();
    assert.match(text ?? '', /^Time axis: /);
    return text!.replace(/^Time axis: /, '').split(', ');
  }

  const tile = (page: Page, name: string) =>
    page.getByRole('list', { name: 'Totals' }).getByRole('listitem', { name, exact: true });
  const query = (page: Page) => new URL(page.url()).searchParams;

  /** Drags across the chart's plot from `a` to `b` (fractions of its width). */
  async function drag(chart: Locator, a: number, b: number) {
    const over = chart.locator('.u-over');
    const box = await over.boundingBox();
    assert.ok(box, 'the chart is drawn');
    const y = box.y + box.height / 2;
    await chart.page().mouse.move(box.x + box.width * a, y);
    await chart.page().mouse.down();
    await chart.page().mouse.move(box.x + box.width * b, y, { steps: 8 });
    await chart.page().mouse.up();
  }

  it('shows the seeded totals and the top models, customers and keys', async () => {
    const page = await dashboard();
    assert.equal(query(page).get('v'), 'dashboard');
    assert.ok(query(page).get('at'), 'the relative window is anchored');
    assert.equal(await tile(page, 'Errors').locator('.value').innerText(), '3');
    assert.match(await tile(page, 'Errors').innerText(), /7\.5% of requests/);
    assert.equal(await tile(page, 'Cost').locator('.value').innerText(), '$6.60');
    assert.equal(await tile(page, 'Tokens').locator('.value').innerText(), '600');
    assert.match(await tile(page, 'Tokens').innerText(), /400 in, 200 out/);
    assert.match(await tile(page, 'Latency p50 / p95').locator('.value').innerText(), /^\d+ ms \/ \d/);
    // An hour's window is read from the logs: its percentiles are exact, and say nothing more.
    assert.doesNotMatch(await tile(page, 'Latency p50 / p95').innerText(), /within/);

    const models = page.getByRole('table', { name: 'Top models' }).locator('tbody tr');
    await models.first().waitFor();
    assert.deepEqual(
      (await models.allInnerTexts()).map((r) => r.split('\t').slice(0, 4)),
      [
        ['alpha-model', '20', '0.0%', '$5.00'],
        ['beta-model', '15', '20.0%', '$1.50'],
        ['gamma-model', '5', '0.0%', '$0.100'],
      ],
    );
    const customers = page.getByRole('table', { name: 'Top customers' }).locator('tbody tr');
    await customers.first().waitFor();
    assert.deepEqual(
      (await customers.allInnerTexts()).map((r) => r.split('\t').slice(0, 2)),
      [
        ['acme', '25'],
        ['globex', '15'],
      ],
    );
    const keys = page.getByRole('table', { name: 'Top keys' }).locator('tbody tr');
    // Each panel is drawn when its own summary answers: the keys' may come after the others'.
    await keys.first().waitFor();
    assert.equal(await keys.count(), 1);
    assert.match(await keys.first().innerText(), /\t40\t7\.5%\t\$6\.60/);
    // Read as the developer who owns the key, the key's name beside.
    const keyName = (await session.api('GET', '/api/keys/current/')).body.name as string;
    await page.getByRole('table', { name: 'Top keys' }).getByText(`Developer One (${keyName})`).waitFor();
    await page.close();
  });

  it('opens the explorer filtered to a top model, and to a bucket of errors', async () => {
    const page = await dashboard();
    const at = query(page).get('at');
    await page.getByRole('table', { name: 'Top models' }).getByRole('button', { name: 'alpha-model' }).click();
    await page.getByText('1–20 of 20 logs').waitFor();
    assert.equal(query(page).get('v'), null, 'the explorer');
    // Model calls of alpha-model: what its row counted.
    assert.deepEqual(JSON.parse(query(page).get('filters')!), [
      MODEL_CALLS,
      { field: 'model', operator: '', values: ['alpha-model'] },
    ]);
    assert.equal(query(page).get('at'), at, "the dashboard's window");

    // Back to the dashboard; a legend entry of "Requests by model" does the same for its model.
    await page.goBack();
    await page
      .getByRole('list', { name: 'Models: open in the explorer' })
      .getByRole('button', { name: 'beta-model' })
      .click();
    await page.getByText('1–15 of 15 logs').waitFor();

    // A click on a bucket of the requests chart, near its requests line (one log a minute): the explorer
    // over that bucket alone, unfiltered; near the errors' line at 0, filtered to failed logs.
    await page.goBack();
    const chart = page.locator('[data-testid=chart-requests]');
    await chart.locator('canvas').waitFor();
    const box = (await chart.locator('.u-over').boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.12);
    await page.mouse.click(box.x + box.width * 0.5, box.y + box.height * 0.12);
    await holds(page, `new URL(location.href).searchParams.has('from')`, 'a bucket opened');
    const q = query(page);
    assert.equal(q.get('v'), null);
    assert.deepEqual(JSON.parse(q.get('filters')!), [MODEL_CALLS]);
    const span = Date.parse(q.get('to')!) - Date.parse(q.get('from')!);
    assert.ok(span > 0 && span <= 5 * 60_000, `one bucket: ${span} ms`);
    await page
      .locator('.summary')
      .getByText(/^1–1 of 1 logs?$/)
      .waitFor();

    await page.goBack();
    await chart.locator('canvas').waitFor();
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height - 2);
    await page.mouse.click(box.x + box.width * 0.5, box.y + box.height - 2);
    await holds(page, `new URL(location.href).searchParams.has('from')`, 'a bucket of errors opened');
    assert.deepEqual(JSON.parse(query(page).get('filters')!), [
      MODEL_CALLS,
      { field: 'status_code', operator: 'gte', values: [400] },
    ]);
    await page.close();
  });

  it('zooms the explorer into a stretch dragged across its chart strip', async () => {
    const page = await signedIn('');
    await page.getByText('1–40 of 40 logs').waitFor();
    const strip = page.locator('[data-testid=chart-strip]');
    await strip.locator('canvas').waitFor();
    await page.screenshot({ path: screenshotPath('explorer-strip.png') });
    const end = Date.parse(query(page).get('at')!);
    await drag(strip, 0.35, 0.75);
    await holds(page, `new URL(location.href).searchParams.has('from')`, 'the window set by the drag');
    const q = query(page);
    assert.equal(q.get('range'), null);
    assert.equal(q.get('at'), null);
    const from = Date.parse(q.get('from')!);
    const to = Date.parse(q.get('to')!);
    // 40% of the hour, give or take the plot's edges: about 24 minutes, inside the hour before `at`.
    assert.ok(to - from > 15 * 60_000 && to - from < 30 * 60_000, `${(to - from) / 60_000} minutes`);
    assert.ok(from >= end - 3_600_000 - 60_000 && to <= end + 60_000, `${q.get('from')} – ${q.get('to')}`);
    // The table lists that stretch only: fewer than the 40 logs, more than none.
    await page.getByText(/^1–\d+ of \d+ logs$/).waitFor();
    const shown = Number(/of (\d+) logs/.exec(await page.getByText(/of \d+ logs/).innerText())![1]);
    assert.ok(shown > 5 && shown < 40, `${shown} logs in the stretch`);
    const figure = page.getByRole('figure', { name: 'Requests and errors over time' });
    await figure.getByText(`Requests ${shown}`, { exact: true }).waitFor();

    // Back restores the hour; Zoom out widens the stretch.
    await page.goBack();
    await page.getByText('1–40 of 40 logs').waitFor();
    await page.goForward();
    await figure.getByRole('button', { name: 'Zoom out' }).click();
    await holds(
      page,
      `(() => { const q = new URL(location.href).searchParams;
      return Date.parse(q.get('to')) - Date.parse(q.get('from')) > ${to - from + 60_000}; })()`,
      'zoomed out',
    );
    await page.close();
  });

  it('ranks the models by any column over 7 days, charts their cost, reads dates, counts no span', async () => {
    const page = await signedIn('?v=dashboard&range=7d');
    // 42 model calls: the four spans are not requests.
    await tile(page, 'Requests').getByText('42', { exact: true }).waitFor();
    await page.getByText(/^Counts model calls \(chat, completion, text, response, embedding/).waitFor();
    // Seven days of a few logs are read from the logs themselves (fewer than a rollup row stands for).
    assert.doesNotMatch(await tile(page, 'Latency p50 / p95').innerText(), /within/);
    const table = page.getByRole('table', { name: 'Top models' });
    const names = async () => (await table.locator('tbody tr td:first-child').allInnerTexts()).map((n) => n.trim());
    const sortOf = async (name: string) =>
      table.getByRole('columnheader', { name, exact: false }).getAttribute('aria-sort');
    await table.waitFor();
    // The server's order, most requests first; the agent span naming alpha-model is not one of its 20.
    assert.deepEqual(await names(), ['alpha-model', 'beta-model', 'gamma-model', 'delta-model']);
    assert.match((await table.locator('tbody tr').first().innerText()).split('\t')[1], /^20$/);
    assert.equal(await sortOf('Requests'), 'descending');
    assert.equal(await sortOf('Cost'), 'none');
    for (const t of ['Top models', 'Top customers', 'Top keys']) {
      const cells = await page.getByRole('table', { name: t }).locator('tbody td:first-child').allInnerTexts();
      assert.ok(!cells.some((c) => c.includes('(none)')), `${t}: ${cells.join(', ')}`);
    }

    // By cost, most first: delta-model's two calls at $2 come before beta-model's fifteen at $0.10.
    await table.getByRole('button', { name: 'Cost' }).click();
    await holds(
      page,
      `document.querySelector('[aria-label="Top models"] tbody tr:nth-child(2) td')?.innerText.trim() === 'delta-model'`,
      'ranked by cost',
    );
    assert.deepEqual(await names(), ['alpha-model', 'delta-model', 'beta-model', 'gamma-model']);
    assert.equal(await sortOf('Cost'), 'descending');
    assert.equal(await sortOf('Requests'), 'none');
    await table.getByRole('button', { name: 'Cost' }).click();
    assert.deepEqual(await names(), ['gamma-model', 'beta-model', 'delta-model', 'alpha-model']);
    assert.equal(await sortOf('Cost'), 'ascending');
    await table.getByRole('button', { name: 'Cost' }).click();

    // Kept while the numbers are loaded again (Refresh) and after a reload.
    const at = query(page).get('at');
    await page.getByRole('button', { name: 'Refresh' }).click();
    await holds(page, `new URL(location.href).searchParams.get('at') !== ${JSON.stringify(at)}`, 'refreshed');
    await table.locator('tbody tr').first().waitFor();
    assert.deepEqual(await names(), ['alpha-model', 'delta-model', 'beta-model', 'gamma-model']);
    await page.reload();
    await table.locator('tbody tr').first().waitFor();
    assert.deepEqual(await names(), ['alpha-model', 'delta-model', 'beta-model', 'gamma-model']);
    assert.equal(await sortOf('Cost'), 'descending');

    // Cost by model beside requests by model: the same models in the same colours.
    for (const id of CHARTS) await page.locator(`[data-testid=${id}] canvas`).waitFor();
    const legend = async (name: string) =>
      page
        .getByRole('list', { name })
        .locator('li')
        .evaluateAll((items) =>
          items.map((li) => `${li.textContent?.trim()} ${li.querySelector('.swatch')?.className}`),
        );
    const requestsLegend = await legend('Models: open in the explorer');
    assert.deepEqual(requestsLegend, [
      'alpha-model swatch c1',
      'beta-model swatch c2',
      'gamma-model swatch c3',
      'delta-model swatch c4',
    ]);
    assert.deepEqual(await legend('Cost by model: open in the explorer'), requestsLegend);

    // A 7-day axis reads dates ("Nov 22"), every tick a day.
    const labels = await axisLabels(page, 'chart-requests');
    assert.ok(labels.length >= 2, labels.join(', '));
    for (const label of labels) assert.match(label, /^[A-Z][a-z]{2} \d{1,2}$/, labels.join(', '));
    assert.deepEqual(await axisLabels(page, 'chart-model-costs'), labels);
    await page.screenshot({ path: screenshotPath('dashboard-7d-by-cost.png'), fullPage: true });
    await page.close();
  });

  it('reads times of day on the axis of an hour', async () => {
    const page = await dashboard();
    const labels = await axisLabels(page, 'chart-requests');
    assert.ok(labels.length >= 2, labels.join(', '));
    // Times, or the date where a day begins.
    for (const label of labels) assert.match(label, /^(\d\d:\d\d|[A-Z][a-z]{2} \d{1,2})$/, labels.join(', '));
    assert.ok(
      labels.some((l) => /^\d\d:\d\d$/.test(l)),
      labels.join(', '),
    );
    await page.close();
  });

  it('zooms the dashboard into a stretch dragged across a chart', async () => {
    const page = await dashboard();
    await drag(page.locator('[data-testid=chart-cost]'), 0.1, 0.5);
    await holds(page, `new URL(location.href).searchParams.has('from')`, 'the window set by the drag');
    assert.equal(query(page).get('v'), 'dashboard');
    await holds(
      page,
      `(() => { const n = Number(document.querySelector('.tiles [aria-label="Requests"] .value')?.textContent);
        return n > 0 && n < 40; })()`,
      'the totals of the stretch',
    );
    await page.close();
  });

  it('says so when the window holds no logs, its charts drawn empty', async () => {
    const page = await signedIn('?v=dashboard&from=2020-01-01T00:00:00.000Z&to=2020-01-02T00:00:00.000Z');
    await page.getByText('No logs in this time window').waitFor();
    assert.equal(await tile(page, 'Requests').locator('.value').innerText(), '0');
    assert.equal(await tile(page, 'Cost').locator('.value').innerText(), '$0');
    assert.equal(await tile(page, 'Latency p50 / p95').locator('.value').innerText(), '— / —');
    await page.locator('[data-testid=chart-models] canvas').waitFor();
    assert.equal(await page.getByRole('table', { name: 'Top models' }).count(), 0);
    await page.close();
  });

  it('asks for the top customers and keys once the totals’ charts are drawn, the top models at once', async () => {
    const page = await session.page({ viewport: { width: 1280, height: 900 } });
    let releaseTotals!: () => void;
    const totalsHeld = new Promise<void>((resolve) => (releaseTotals = resolve));
    let releaseCharts!: () => void;
    const chartsHeld = new Promise<void>((resolve) => (releaseCharts = resolve));
    const asked: string[] = [];
    await page.route('**/api/request-logs/summary/', async (route) => {
      const groupBy = (JSON.parse(route.request().postData() ?? '{}') as { group_by?: string[] }).group_by?.[0];
      asked.push(groupBy ?? 'totals');
      if (groupBy === undefined) await totalsHeld;
      await route.continue();
    });
    // The charts' module (uPlot's chunk) held: the totals can answer while no chart is drawn yet.
    await page.route(/\/assets\/chart-[^/]*\.js$/, async (route) => {
      await chartsHeld;
      await route.continue();
    });
    const answered = (groupBy: string | undefined) =>
      page.waitForResponse(
        (r) =>
          r.url().endsWith('/api/request-logs/summary/') &&
          (JSON.parse(r.request().postData() ?? '{}') as { group_by?: string[] }).group_by?.[0] === groupBy,
      );
    const modelsAnswered = answered('model');
    const totalsAnswered = answered(undefined);
    await session.signIn(page, '?v=dashboard');
    // The models answered while the totals are held: the customers and keys, had they been asked for
    // with the others, would have been asked for by now.
    await modelsAnswered;
    assert.deepEqual(asked.toSorted(), ['model', 'totals']);
    releaseTotals();
    await totalsAnswered;
    // The totals' tiles are shown, their charts not drawn: still only those two asked for.
    await tile(page, 'Requests').getByText('40', { exact: true }).waitFor();
    assert.equal(await page.locator('[data-testid=chart-requests] canvas').count(), 0);
    assert.deepEqual(asked.toSorted(), ['model', 'totals']);
    releaseCharts();
    await page.getByRole('table', { name: 'Top customers' }).waitFor();
    await page.getByRole('table', { name: 'Top keys' }).waitFor();
    assert.deepEqual(asked.slice(2).toSorted(), ['customer_identifier', 'organization_key__name']);
    await page.close();
  });

  it('asks for the top lists even when the charts cannot be drawn (their module refused)', async () => {
    const page = await session.page({ problems: [], viewport: { width: 1280, height: 900 } });
    await page.route(/\/assets\/chart-[^/]*\.js$/, (route) => route.abort());
    await session.signIn(page, '?v=dashboard');
    await page.getByText('The chart could not be loaded; reload the page.').first().waitFor();
    await page.getByRole('table', { name: 'Top customers' }).waitFor();
    await page.getByRole('table', { name: 'Top keys' }).waitFor();
    await page.close();
  });

  it('draws each panel when its own numbers arrive: a slow or failed top list holds up nothing else', async () => {
    // The refused call is logged by the browser; nothing else may be.
    const own: string[] = [];
    const page = await session.page({ problems: own, viewport: { width: 1280, height: 900 } });
    let releaseCustomers!: () => void;
    const customersHeld = new Promise<void>((resolve) => (releaseCustomers = resolve));
    // What each panel asks for: the top customers and keys add their points up, so they ask for UTC days
    // (a day of the customer rollups is one row; hours hold a log or two, and would send them to the logs).
    const asked = new Map<string, string>();
    await page.route('**/api/request-logs/summary/', async (route) => {
      const body = JSON.parse(route.request().postData() ?? '{}') as {
        group_by?: string[];
        bucket?: string;
        tz: string;
      };
      const groupBy = body.group_by?.[0];
      asked.set(groupBy ?? 'totals', `${body.bucket ?? 'auto'} ${body.tz}`);
      if (groupBy === 'customer_identifier') await customersHeld;
      if (groupBy === 'organization_key__name') {
        await route.fulfill({
          status: 400,
          contentType: 'application/json',
          body: JSON.stringify({ error: { code: 'invalid_request', message: 'keys refused here' } }),
        });
        return;
      }
      await route.continue();
    });
    await session.signIn(page, '?v=dashboard');
    // The totals, their five charts and the models' chart, while the customers are still on their way.
    await tile(page, 'Requests').getByText('40', { exact: true }).waitFor();
    for (const id of CHARTS) await page.locator(`[data-testid=${id}] canvas`).waitFor();
    assert.equal(await page.getByRole('table', { name: 'Top models' }).locator('tbody tr').count(), 3);
    const customers = page.getByRole('region', { name: 'Top customers' });
    assert.equal(await customers.getByText('Loading…').count(), 1);
    await page.getByRole('region', { name: 'Top keys' }).getByText('Could not be loaded: keys refused here').waitFor();
    releaseCustomers();
    await customers.getByRole('table', { name: 'Top customers' }).waitFor();
    assert.equal(await customers.locator('tbody tr').count(), 2);
    assert.equal(await customers.getByText('Loading…').count(), 0);
    assert.equal(asked.get('customer_identifier'), '1d UTC');
    assert.equal(asked.get('organization_key__name'), '1d UTC');
    assert.match(asked.get('model') ?? '', /^auto /);
    assert.match(asked.get('totals') ?? '', /^auto /);
    await page.close();
    assert.deepEqual(own, [
      'console: Failed to load resource: the server responded with a status of 400 (Bad Request)',
    ]);
  });

  for (const theme of ['light', 'dark']) {
    it(`draws the dashboard in the ${theme} theme, and on a phone without sideways scrolling`, async () => {
      const page = await dashboard(theme);
      assert.equal(await page.evaluate('document.documentElement.dataset.theme'), theme);
      await page.screenshot({ path: screenshotPath(`dashboard-${theme}.png`), fullPage: true });
      // The axes are drawn in the theme's muted colour: the dark chart is not the light one.
      const pixels = await page.locator('[data-testid=chart-requests]').screenshot();
      assert.ok(pixels.length > 1000);
      await page.close();

      const phone = await dashboard(theme, { width: 390, height: 844 });
      const { scroll, client } = await documentWidths(phone);
      assert.ok(scroll <= client, `the page is ${scroll} px wide in a ${client} px window`);
      const chartBox = await phone.locator('[data-testid=chart-models]').boundingBox();
      assert.ok(chartBox && chartBox.x >= 0 && chartBox.x + chartBox.width <= 390, JSON.stringify(chartBox));
      await phone.screenshot({ path: screenshotPath(`dashboard-phone-${theme}.png`), fullPage: true });
      await phone.close();
    });
  }

  it('shows costs below a cent at three significant digits, whole, in the tiles and the top lists', async () => {
    // An organization of its own: three calls at $0.000012 each, $0.0000360 in all.
    const tiny = await session.t.tenant();
    const now = Date.now();
    await session.seedLogs(
      [0, 1, 2].map((i) => ({
        model: 'tiny-model',
        input: 'hi',
        output: 'hello',
        cost: 0.000012,
        customer_identifier: 'thrifty',
        timestamp: new Date(now - (i + 1) * 60_000).toISOString(),
      })),
      tiny.key,
    );
    for (const viewport of [
      { width: 1280, height: 900 },
      { width: 390, height: 844 },
    ]) {
      const page = await signedIn('?v=dashboard', 'light', viewport, tiny.key);
      await tile(page, 'Requests').getByText('3', { exact: true }).waitFor();
      assert.equal(await tile(page, 'Cost').locator('.value').innerText(), '$0.0000360');
      for (const name of ['Top models', 'Top customers']) {
        const cost = page.getByRole('table', { name }).locator('tbody td.c-cost').first();
        await cost.waitFor();
        assert.equal(await cost.innerText(), '$0.0000360', `${name} at ${viewport.width} px`);
        const cut = await cost.evaluate((el) => el.scrollWidth > el.clientWidth);
        assert.equal(cut, false, `${name}'s cost is whole at ${viewport.width} px`);
      }
      await page.close();
    }
  });

  it('ran without a script error or a Content-Security-Policy violation', () => {
    assert.deepEqual(session.problems, []);
  });
});
