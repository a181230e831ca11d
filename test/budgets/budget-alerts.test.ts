/**
 * Budget alerts (docs/api.md "Budgets", Alerts): a signed POST to the budget's webhook when a period's
 * spend first reaches a threshold, retried after a failed delivery, and delivered once however many
 * nodes try at the same moment. Priced as in budget-calls.test.ts: a call with max_tokens 4 reserves
 * $4 and costs $4.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { BudgetAlerts } from '../../src/budgets/alerts.js';
import { api } from '../support/harness.js';
import { type ProxyTestApp, startProxyApp } from '../support/proxy-app.js';

interface Delivery {
  body: string;
  signature: string | undefined;
}

/** A webhook on 127.0.0.1 that answers 500 to its first `failures` deliveries, then 204. */
async function startWebhook(failures = 0) {
  const received: Delivery[] = [];
  let waiting: (() => void)[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        body: Buffer.concat(chunks).toString(),
        signature: req.headers['x-gatelog-signature'] as string,
      });
      res.writeHead(received.length <= failures ? 500 : 204).end();
      for (const wake of waiting) wake();
      waiting = [];
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    /** Resolves once `n` deliveries have arrived. */
    async count(n: number) {
      while (received.length < n) await new Promise<void>((resolve) => waiting.push(resolve));
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const signed = (secret: string, body: string) =>
  `sha256=${crypto.createHmac('sha256', secret).update(body).digest('hex')}`;

describe('budget alerts', () => {
  let p: ProxyTestApp;
  let dir: string;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatelog-alerts-'));
    const pricing = path.join(dir, 'pricing.json');
    fs.writeFileSync(
      pricing,
      JSON.stringify({ 'gpt-4o-mini': { input_per_million: 0, output_per_million: 1_000_000 } }),
    );
    p = await startProxyApp({
      GATELOG_PRICING_FILE: pricing,
      GATELOG_ALERT_RETRY_MS: '50',
      GATELOG_ALERT_POLL_MS: '50',
    });
  });
  after(async () => {
    await p.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A key with a budget of $8 (thresholds half and whole) whose webhook is `url`, as an openai client. */
  const budgeted = async (name: string, url: string) => {
    const key = await api(p.t.baseUrl, 'POST', '/api/keys/', { key: p.a.key, body: { name, scopes: ['models'] } });
    const budget = await api(p.t.baseUrl, 'POST', '/api/budgets/', {
      key: p.a.key,
      body: {
        name,
        applies_to: { type: 'key', value: key.body.id },
        amount_usd: 8,
        alert_thresholds: [0.5, 1],
        webhook_url: url,
      },
    });
    assert.equal(budget.status, 201, budget.text);
    const client = new OpenAI({ apiKey: key.body.key, baseURL: `${p.t.baseUrl}/api`, maxRetries: 0 });
    const ask = () =>
      client.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'hi' }],
        max_tokens: 4,
      });
    return { budget: budget.body as { id: string; webhook_secret: string }, keyId: key.body.id as string, ask };
  };

  it('posts each threshold once, signed, retrying a failed delivery', async () => {
    const hook = await startWebhook(1);
    try {
      const { budget, keyId, ask } = await budgeted('alerted', hook.url);
      await ask();
      // Half the budget reached ($4 of $8): the first delivery fails, the retry arrives.
      await hook.count(2);
      await ask();
      await hook.count(3);
      const bodies = hook.received.map((d) => JSON.parse(d.body) as Record<string, unknown>);
      assert.deepEqual(
        bodies.map((b) => [b.threshold, b.spent_usd]),
        [
          [0.5, 4],
          [0.5, 4],
          [1, 8],
        ],
      );
      for (const delivery of hook.received)
        assert.equal(delivery.signature, signed(budget.webhook_secret, delivery.body));
      assert.deepEqual(bodies[2], {
        type: 'budget.threshold',
        budget: { id: budget.id, name: 'alerted', applies_to: { type: 'key', value: keyId } },
        threshold: 1,
        spent_usd: 8,
        amount_usd: 8,
        period_start: bodies[2].period_start,
        period_end: bodies[2].period_end,
      });
      assert.match(String(bodies[2].period_start), /^\d{4}-\d\d-01T00:00:00\.000Z$/);
    } finally {
      await hook.close();
    }
  });

  it('is delivered once when several nodes find it due at the same moment', async () => {
    const hook = await startWebhook();
    try {
      const { budget, ask } = await budgeted('raced', hook.url);
      // Nodes of their own on the same database, racing this app's own deliverer for the alert.
      const nodes = Array.from(
        { length: 3 },
        () => new BudgetAlerts(p.t.db.db, p.t.budgets.store, { firstRetryMs: 50, pollMs: 50 }),
      );
      await ask();
      await Promise.all(nodes.map((node) => node.deliverDue()));
      await hook.count(1);
      // Once its delivery is recorded, every node looks again: none attempts it a second time.
      const alert = () =>
        p.t.db.db.selectFrom('budget_alerts').selectAll().where('budget_id', '=', budget.id).executeTakeFirstOrThrow();
      while ((await alert()).delivered_at === null) await new Promise((resolve) => setImmediate(resolve));
      for (const node of nodes) await node.deliverDue();
      const row = await alert();
      assert.equal(row.attempts, 1, 'attempted by one node only');
      assert.equal(hook.received.length, 1);
    } finally {
      await hook.close();
    }
  });
});
