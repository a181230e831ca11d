/**
 * Budgets on proxied calls (docs/api.md "Budgets"), through the official openai client. Priced so that
 * the numbers are whole: gpt-4o-mini's prompt costs nothing and each output token $1, so a call with
 * max_tokens 10 reserves $10 and the fake's answer (4 output tokens) costs $4.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { api, type Tenant } from '../support/harness.js';
import { PROVIDER_KEY, type ProxyTestApp, registerProviderKey, startProxyApp } from '../support/proxy-app.js';

const CALLS = 50;

describe('budgets on proxied calls', () => {
  let p: ProxyTestApp;
  let pricing: string;

  /** A key of its own (scope models), and a budget on it of `amount` a month. */
  const budgetedKey = async (name: string, amount: number, extra: Record<string, unknown> = {}) => {
    const key = await api(p.t.baseUrl, 'POST', '/api/keys/', { key: p.a.key, body: { name, scopes: ['models'] } });
    assert.equal(key.status, 201, key.text);
    const budget = await api(p.t.baseUrl, 'POST', '/api/budgets/', {
      key: p.a.key,
      body: { name: `${name} budget`, applies_to: { type: 'key', value: key.body.id }, amount_usd: amount, ...extra },
    });
    assert.equal(budget.status, 201, budget.text);
    const client = new OpenAI({ apiKey: key.body.key, baseURL: `${p.t.baseUrl}/api`, maxRetries: 0 });
    return { client, budgetId: budget.body.id as string };
  };
  const standing = async (budgetId: string, who: Tenant = p.a) => {
    await p.t.flush();
    await p.t.budgets.settled();
    const res = await api(p.t.baseUrl, 'GET', `/api/budgets/${budgetId}/`, { key: who.key });
    assert.equal(res.status, 200, res.text);
    return res.body as { spent_usd: number; reserved_usd: number; remaining_usd: number };
  };
  /** The standing once no call holds anything (the calls' logs recorded and settled). */
  const settledStanding = async (budgetId: string) => {
    for (;;) {
      const now = await standing(budgetId);
      if (now.reserved_usd === 0) return now;
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  const ask = (client: OpenAI, extra: Record<string, unknown> = {}) =>
    client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 10,
      ...extra,
    } as OpenAI.ChatCompletionCreateParamsNonStreaming);
  const outcome = (call: Promise<unknown>) =>
    call.then(
      () => 'passed',
      (err: unknown) => (err instanceof OpenAI.APIError ? `${err.status} ${err.code}` : String(err)),
    );

  before(async () => {
    pricing = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gatelog-budget-')), 'pricing.json');
    fs.writeFileSync(
      pricing,
      JSON.stringify({ 'gpt-4o-mini': { input_per_million: 0, output_per_million: 1_000_000 } }),
    );
    p = await startProxyApp({ GATELOG_PRICING_FILE: pricing });
  });
  after(async () => {
    await p.close();
    fs.rmSync(path.dirname(pricing), { recursive: true, force: true });
  });

  it(`forwards exactly the calls whose reservations fit, of ${CALLS} streamed at once`, async () => {
    const { client, budgetId } = await budgetedKey('three calls', 30);
    // Every stream is held open while the others arrive: none settles before all are admitted or refused.
    p.fake.chat({ firstEventDelayMs: 3000 });
    const forwarded = p.fake.chats.length;
    const outcomes = await Promise.all(
      Array.from({ length: CALLS }, () =>
        outcome(
          client.chat.completions
            .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10, stream: true })
            .then(async (stream) => {
              for await (const _ of stream);
            }),
        ),
      ),
    );
    p.fake.chat();
    assert.equal(outcomes.filter((o) => o === 'passed').length, 3, outcomes.join(', '));
    assert.equal(outcomes.filter((o) => o === '402 budget_exceeded').length, CALLS - 3, outcomes.join(', '));
    assert.equal(p.fake.chats.length - forwarded, 3, 'only the calls that fit reached the provider');
    const after = await settledStanding(budgetId);
    assert.deepEqual([after.spent_usd, after.reserved_usd, after.remaining_usd], [12, 0, 18]);
  });

  it('names the budget that refused, and logs the refusal', async () => {
    const { client, budgetId } = await budgetedKey('one call', 13);
    await ask(client);
    assert.equal((await standing(budgetId)).spent_usd, 4);
    const err = await ask(client).then(
      () => assert.fail('the call was not refused'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof OpenAI.APIError && err.status === 402, String(err));
    assert.equal(err.code, 'budget_exceeded');
    assert.deepEqual((err.error as { budget?: unknown }).budget, {
      id: budgetId,
      name: 'one call budget',
      remaining_usd: 9,
    });
    const logId = err.headers?.get('x-gatelog-log-id');
    await p.t.flush();
    const log = await api(p.t.baseUrl, 'GET', `/api/request-logs/${logId}/`, { key: p.a.key });
    assert.equal(log.body.status_code, 402);
    assert.match(log.body.error_message, /'one call budget' has \$9\.000000 left/);
  });

  it('charges a stream cut midway what it used, and gives back the rest', async () => {
    const { client, budgetId } = await budgetedKey('cut stream', 100);
    p.fake.behave({ kind: 'stream-reset', after: 2 }, 1);
    const cut = await outcome(
      client.chat.completions
        .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10, stream: true })
        .then(async (stream) => {
          for await (const _ of stream);
        }),
    );
    assert.notEqual(cut, 'passed');
    const after = await settledStanding(budgetId);
    assert.ok(
      after.spent_usd > 0 && after.spent_usd < 10,
      `spent ${after.spent_usd}: what was streamed, not the reservation`,
    );
  });

  it('gives back the whole reservation of a call the client abandoned before its answer', async () => {
    const { client, budgetId } = await budgetedKey('abandoned', 100);
    p.fake.chat({ firstEventDelayMs: 60_000 });
    const abort = new AbortController();
    const stream = await client.chat.completions.create(
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10, stream: true },
      { signal: abort.signal },
    );
    p.fake.chat();
    const held = await api(p.t.baseUrl, 'GET', `/api/budgets/${budgetId}/`, { key: p.a.key });
    assert.equal(held.body.reserved_usd, 10, 'held while the call runs');
    abort.abort();
    await outcome(
      (async () => {
        for await (const _ of stream);
      })(),
    );
    assert.equal((await settledStanding(budgetId)).spent_usd, 0);
  });

  it("holds a customer's and the organization's budgets, and refuses a model without a price", async () => {
    const b = await p.t.tenant();
    await registerProviderKey(p.t, b.key, { provider: 'openai', api_key: PROVIDER_KEY });
    const make = async (body: Record<string, unknown>) => {
      const res = await api(p.t.baseUrl, 'POST', '/api/budgets/', { key: b.key, body });
      assert.equal(res.status, 201, res.text);
      return res.body.id as string;
    };
    await make({
      name: 'acme',
      applies_to: { type: 'customer', value: 'acme' },
      amount_usd: 10,
      period: 'day',
      tz: 'Europe/Berlin',
    });
    const org = await make({ name: 'everything', applies_to: { type: 'organization' }, amount_usd: 17 });
    const client = new OpenAI({ apiKey: b.key, baseURL: `${p.t.baseUrl}/api`, maxRetries: 0 });

    // Each call's settlement is written before the next (standing() waits for it): spend, not reservations.
    assert.equal(await outcome(ask(client, { customer_identifier: 'acme' })), 'passed');
    assert.equal((await standing(org, b)).spent_usd, 4);
    assert.equal(await outcome(ask(client, { customer_identifier: 'acme' })), '402 budget_exceeded', "acme's $6 left");
    assert.equal(await outcome(ask(client, { customer_identifier: 'globex' })), 'passed');
    assert.equal((await standing(org, b)).spent_usd, 8);
    assert.equal(await outcome(ask(client)), '402 budget_exceeded', "the organization's $9 left");
    assert.deepEqual((await standing(org, b)).spent_usd, 8);

    const unpriced = await outcome(ask(client, { model: 'gpt-unpriced-model', max_tokens: 1 }));
    assert.equal(unpriced, '403 model_not_priced');
  });
});
