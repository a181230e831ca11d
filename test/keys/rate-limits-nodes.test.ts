/**
 * One rate limit for every node (docs/api.md "Rate limits"): two `gatelog serve` processes on one
 * database — a PostgreSQL database, or one SQLite file — take a burst for one key at once, and exactly
 * the limit passes between them.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { runGatelog, spawnServer, stopServers } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { api, servedEnv } from '../support/harness.js';
import { PROVIDER_KEY } from '../support/proxy-app.js';

const LIMIT = 7;
const CALLS_PER_NODE = 10;

describe('a rate limit shared by two nodes', () => {
  let database: TestDatabase;
  let fake: FakeUpstream;
  const nodes: { child: ChildProcess; baseUrl: string }[] = [];
  let env: Record<string, string>;

  before(async () => {
    database = await createTestDatabase();
    fake = await startFakeUpstream();
    env = servedEnv(database, { GATELOG_OPENAI_BASE_URL: fake.baseUrl });
    // The first node migrates the database before the second opens it.
    nodes.push(await spawnServer(env));
    nodes.push(await spawnServer(env));
  });
  after(async () => {
    await stopServers(nodes);
    await fake.close();
    await database.drop();
  });

  it('passes exactly the limit of a burst spread over both', async () => {
    const cli = async (...args: string[]) => {
      const res = await runGatelog([...args, '--json'], env);
      assert.equal(res.code, 0, res.stderr);
      return JSON.parse(res.stdout) as Record<string, string>;
    };
    const org = await cli('orgs', 'create', 'rate-limit-nodes');
    const admin = await cli('keys', 'create', '--org', org.id, '--name', 'admin');
    const registered = await api(nodes[0].baseUrl, 'POST', '/api/provider-keys/', {
      key: admin.key,
      body: { provider: 'openai', api_key: PROVIDER_KEY },
    });
    assert.equal(registered.status, 201, registered.text);
    const limited = await api(nodes[0].baseUrl, 'POST', '/api/keys/', {
      key: admin.key,
      body: { name: 'shared limit', scopes: ['models'], rate_limits: { requests_per_minute: LIMIT } },
    });
    assert.equal(limited.status, 201, limited.text);
    const clients = nodes.map(
      (n) => new OpenAI({ apiKey: limited.body.key, baseURL: `${n.baseUrl}/api`, maxRetries: 0 }),
    );

    const outcomes = await Promise.all(
      clients.flatMap((client) =>
        Array.from({ length: CALLS_PER_NODE }, () =>
          client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }).then(
            () => 'passed',
            (err: unknown) => (err instanceof OpenAI.RateLimitError ? 'limited' : String(err)),
          ),
        ),
      ),
    );
    assert.equal(outcomes.filter((o) => o === 'passed').length, LIMIT, outcomes.join(', '));
    assert.equal(outcomes.filter((o) => o === 'limited').length, 2 * CALLS_PER_NODE - LIMIT, outcomes.join(', '));
    assert.equal(fake.chats.length, LIMIT, 'only the calls that passed reached the provider');
  });
});
