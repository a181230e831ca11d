/**
 * Budgets across processes (docs/api.md "Budgets"): two `gatelog serve` nodes on one database — a
 * PostgreSQL database, or one SQLite file — forward exactly the calls whose reservations fit; and a node
 * killed with 200 calls in flight leaves its spend intact and its reservations given back once they
 * expire. Priced so that a call with max_tokens 10 reserves $10 and costs $4 (4 output tokens at $1).
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { runGatelog, spawnServer, stopServers, waitForExit } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { api, servedEnv } from '../support/harness.js';
import { PROVIDER_KEY } from '../support/proxy-app.js';

type Node = { child: ChildProcess; baseUrl: string };

describe('budgets across processes', () => {
  let database: TestDatabase;
  let fake: FakeUpstream;
  let dir: string;
  let env: Record<string, string>;
  const nodes: Node[] = [];
  let admin: string;

  const cli = async (...args: string[]) => {
    const res = await runGatelog([...args, '--json'], env);
    assert.equal(res.code, 0, res.stderr);
    return JSON.parse(res.stdout) as Record<string, string>;
  };
  /** A key with a budget of `amount` a month, as openai clients of `on`. */
  const budgetedKey = async (name: string, amount: number, on: readonly Node[]) => {
    const key = await api(on[0].baseUrl, 'POST', '/api/keys/', { key: admin, body: { name, scopes: ['models'] } });
    assert.equal(key.status, 201, key.text);
    const budget = await api(on[0].baseUrl, 'POST', '/api/budgets/', {
      key: admin,
      body: { name, applies_to: { type: 'key', value: key.body.id }, amount_usd: amount },
    });
    assert.equal(budget.status, 201, budget.text);
    const clients = on.map((n) => new OpenAI({ apiKey: key.body.key, baseURL: `${n.baseUrl}/api`, maxRetries: 0 }));
    return { clients, budgetId: budget.body.id as string };
  };
  const standing = async (node: Node, budgetId: string) => {
    const res = await api(node.baseUrl, 'GET', `/api/budgets/${budgetId}/`, { key: admin });
    assert.equal(res.status, 200, res.text);
    return res.body as { spent_usd: number; reserved_usd: number };
  };
  const streamed = (client: OpenAI) =>
    client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10, stream: true })
      .then(async (stream) => {
        for await (const _ of stream);
        return 'passed';
      })
      .catch((err: unknown) => (err instanceof OpenAI.APIError ? `${err.status} ${err.code}` : String(err)));

  before(async () => {
    database = await createTestDatabase();
    fake = await startFakeUpstream();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatelog-budget-nodes-'));
    const pricing = path.join(dir, 'pricing.json');
    fs.writeFileSync(
      pricing,
      JSON.stringify({ 'gpt-4o-mini': { input_per_million: 0, output_per_million: 1_000_000 } }),
    );
    env = servedEnv(database, {
      GATELOG_OPENAI_BASE_URL: fake.baseUrl,
      GATELOG_PRICING_FILE: pricing,
      GATELOG_BUDGET_HOLD_MS: '10000',
    });
    // The first node migrates the database before the second opens it.
    nodes.push(await spawnServer(env));
    nodes.push(await spawnServer(env));
    const org = await cli('orgs', 'create', 'budget-nodes');
    admin = (await cli('keys', 'create', '--org', org.id, '--name', 'admin')).key;
    const registered = await api(nodes[0].baseUrl, 'POST', '/api/provider-keys/', {
      key: admin,
      body: { provider: 'openai', api_key: PROVIDER_KEY },
    });
    assert.equal(registered.status, 201, registered.text);
  });
  after(async () => {
    await stopServers(nodes.filter((n) => n.child.exitCode === null && n.child.signalCode === null));
    await fake.close();
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('forwards exactly the calls that fit, of a burst spread over two nodes', async () => {
    const { clients, budgetId } = await budgetedKey('shared budget', 30, nodes);
    fake.chat({ firstEventDelayMs: 3000 });
    const forwarded = fake.chats.length;
    const outcomes = await Promise.all(clients.flatMap((client) => Array.from({ length: 12 }, () => streamed(client))));
    fake.chat();
    assert.equal(outcomes.filter((o) => o === 'passed').length, 3, outcomes.join(', '));
    assert.equal(outcomes.filter((o) => o === '402 budget_exceeded').length, 21, outcomes.join(', '));
    assert.equal(fake.chats.length - forwarded, 3);
    for (;;) {
      const now = await standing(nodes[1], budgetId);
      if (now.reserved_usd === 0) {
        assert.equal(now.spent_usd, 12);
        break;
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
  });

  it('keeps spend and gives back the reservations of a node killed with 200 calls in flight', async () => {
    const { clients, budgetId } = await budgetedKey('killed', 10_000, nodes);
    const [client, survivorClient] = clients;
    assert.equal(await streamed(client), 'passed');
    assert.equal(await streamed(client), 'passed');
    // 200 calls held open by the provider, then the node that admitted them dies.
    fake.chat({ firstEventDelayMs: 120_000 });
    const inFlight = Array.from({ length: 200 }, () => streamed(client));
    for (;;) {
      const now = await standing(nodes[1], budgetId);
      if (now.reserved_usd === 2000) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    nodes[0].child.kill('SIGKILL');
    await waitForExit(nodes[0].child);
    await Promise.all(inFlight);
    fake.chat();
    const spentBefore = (await standing(nodes[1], budgetId)).spent_usd;
    assert.equal(spentBefore, 8, 'the two calls that ended');
    // The survivor gives back the dead node's reservations once they expire.
    for (;;) {
      const now = await standing(nodes[1], budgetId);
      if (now.reserved_usd === 0) {
        assert.equal(now.spent_usd, spentBefore, 'spend intact');
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(await streamed(survivorClient), 'passed', 'the budget serves again');
  });
});
