/**
 * A model gatelog has no price for (docs/api.md "Costs"): its log's cost is null — unknown, never a
 * made-up $0 — with a `metadata.pricing` note saying so, in the log, the list, request_breakdown, a
 * dataset copied from it and the web UI; nothing to price (no model, no tokens) and failed calls still
 * cost a known 0, and a caller's own cost is kept.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser } from 'playwright-core';
import { launchChromium, withoutChromium } from '../support/chromium.js';
import { api } from '../support/harness.js';
import { logNamedBy, type ProxyTestApp, startProxyApp } from '../support/proxy-app.js';
import { openSignedIn } from '../support/ui-sign-in.js';

describe('a model without a price', () => {
  let p: ProxyTestApp;
  let logId: string;
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await api(p.t.baseUrl, method, path, { key: p.a.key, body });
    assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${res.text}`);
    return res.body;
  };

  before(async () => {
    p = await startProxyApp();
    // The team's own server, serving a model of its own under a name no catalog knows.
    await call('POST', '/api/provider-keys/', {
      provider: 'local',
      api_key: 'local-key-000000001',
      base_url: p.fake.baseUrl,
      models: ['house-model-*'],
    });
  });
  after(() => p?.close());

  it('logs a proxied call with cost null and a pricing note, and says so in request_breakdown', async () => {
    const { data, response } = await p.client.chat.completions
      .create({
        model: 'house-model-7b',
        messages: [{ role: 'user', content: 'Hello' }],
        // @ts-expect-error a gatelog platform parameter
        request_breakdown: true,
      })
      .withResponse();
    const breakdown = (data as unknown as { request_breakdown: { cost: unknown } }).request_breakdown;
    assert.equal(breakdown.cost, null);
    const log = await logNamedBy(p, response.headers.get('x-gatelog-log-id'));
    logId = log.unique_id;
    assert.equal(log.status_code, 200);
    assert.equal(log.prompt_tokens > 0, true);
    assert.equal(log.cost, null);
    assert.match(log.metadata.pricing, /No price is known for model 'house-model-7b'/);
    const list = await call('GET', '/api/request-logs/list/?page_size=1');
    assert.equal(list.results[0].unique_id, logId);
    assert.equal(list.results[0].cost, null);
    // The note is how such logs are found (docs/api.md "Costs").
    const found = await call('POST', '/api/request-logs/list/', {
      filters: { metadata__pricing: { operator: 'isnull', value: [false] } },
    });
    assert.deepEqual(
      found.results.map((r: { unique_id: string }) => r.unique_id),
      [logId],
    );
  });

  it('logs a logged call the same way, keeps a cost the caller gives, and prices nothing at 0', async () => {
    const created = await call('POST', '/api/request-logs/create/', {
      model: 'mystery-1',
      prompt_tokens: 10,
      completion_tokens: 5,
    });
    const unknown = await call('GET', `/api/request-logs/${created.unique_id}/`);
    assert.equal(unknown.cost, null);
    assert.match(unknown.metadata.pricing, /mystery-1/);
    const given = await call('POST', '/api/request-logs/create/', {
      model: 'mystery-1',
      prompt_tokens: 10,
      completion_tokens: 5,
      cost: 0.25,
    });
    assert.equal((await call('GET', `/api/request-logs/${given.unique_id}/`)).cost, 0.25);
    // A workflow span has no model, and a call that used no tokens spent nothing: both known to cost 0.
    const span = await call('POST', '/api/request-logs/create/', { log_type: 'workflow', span_name: 'run' });
    const spanLog = await call('GET', `/api/request-logs/${span.unique_id}/`);
    assert.equal(spanLog.cost, 0);
    assert.equal(spanLog.metadata.pricing, undefined);
    const failed = await call('POST', '/api/request-logs/create/', {
      model: 'mystery-1',
      prompt_tokens: 10,
      status_code: 500,
    });
    assert.equal((await call('GET', `/api/request-logs/${failed.unique_id}/`)).cost, 0);
  });

  it('keeps the cost unknown in a dataset copied from the log', async () => {
    const dataset = await call('POST', '/api/datasets/', { name: 'unpriced' });
    await call('POST', `/api/datasets/${dataset.id}/logs/`, { log_ids: [logId] });
    const list = await call('GET', `/api/datasets/${dataset.id}/logs/list/`);
    assert.equal(list.results.length, 1);
    assert.equal(list.results[0].cost, null);
  });

  it('exports the cost as unknown: null in JSON Lines, empty in CSV', async () => {
    const get = (format: string) =>
      fetch(`${p.t.baseUrl}/api/request-logs/export/?format=${format}&model=house-model-7b`, {
        headers: { authorization: `Bearer ${p.a.key}` },
      });
    const jsonl = await get('jsonl');
    assert.equal(jsonl.status, 200);
    const rows = (await jsonl.text())
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    assert.ok(rows.length >= 1);
    assert.ok(rows.every((r: { cost: unknown }) => r.cost === null));
    const csv = await get('csv');
    assert.equal(csv.status, 200);
    const [header, first] = (await csv.text()).split(/\r?\n/);
    const at = header.split(',').indexOf('cost');
    assert.ok(at >= 0, header);
    assert.equal(first.split(',')[at], '');
  });

  describe('in the web UI', { skip: withoutChromium }, () => {
    let browser: Browser;
    before(async () => (browser = await launchChromium()));
    after(() => browser?.close());

    it('shows the cost as unknown, not $0', async () => {
      const page = await openSignedIn(browser, p.t.baseUrl, p.a.key);
      const grid = page.getByRole('grid', { name: 'Logs' });
      const row = grid.locator('tbody tr', { hasText: 'house-model-7b' });
      await row.waitFor();
      const cost = row.locator('.unknown');
      assert.equal((await cost.innerText()).replace(/\s+/g, ' ').trim(), '— (price unknown)');
      assert.equal(await row.getByText('$0', { exact: true }).count(), 0);
      // The log's panel says so too.
      await row.click();
      const facts = page.locator('dl.facts');
      await facts.waitFor();
      const costFact = facts.locator('dt', { hasText: /^Cost$/ }).locator('xpath=following-sibling::dd[1]');
      assert.match(await costFact.innerText(), /—/);
      assert.doesNotMatch(await facts.innerText(), /\$0(?![.\d])/);
      await page.close();
    });
  });
});
