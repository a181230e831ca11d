/**
 * Several `gatelog serve` processes on one PostgreSQL database, as a deployment behind a load balancer
 * runs them (README "Running several nodes"): they start at the same time on a database nobody has
 * migrated, honour what is made through any of them (keys within the one-second cache window), and store
 * and count every acknowledged log exactly once, whichever node took it or answers the list.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { connect } from '../../src/db/connect.js';
import { runGatelogJson, spawnServer, stopServers } from '../support/cli.js';
import { createTestDatabase, testDialect, type TestDatabase } from '../support/database.js';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';
import { api, servedEnv } from '../support/harness.js';

const NODES = 3;

/** Polls `check` until it holds, for at most `ms`; returns how long it took. */
async function within(ms: number, what: string, check: () => Promise<boolean>): Promise<number> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > ms) assert.fail(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return performance.now() - started;
}

describe('several gatelog nodes on one PostgreSQL database', { skip: testDialect !== 'postgres' }, () => {
  let database: TestDatabase;
  let fake: FakeUpstream;
  let env: Record<string, string>;
  const nodes: { child: ChildProcess; baseUrl: string }[] = [];
  const cli = async (...args: string[]) => (await runGatelogJson(args, env)) as Record<string, string>;

  before(async () => {
    database = await createTestDatabase();
    fake = await startFakeUpstream();
    env = servedEnv(database, { GATELOG_OPENAI_BASE_URL: fake.baseUrl });
  });
  after(async () => {
    await stopServers(nodes);
    await fake.close();
    await database.drop();
  });

  it('start at the same time on an unmigrated database, each migration applied once', async () => {
    nodes.push(...(await Promise.all(Array.from({ length: NODES }, () => spawnServer(env)))));
    for (const node of nodes) assert.equal((await api(node.baseUrl, 'GET', '/health')).status, 200);
    const { db } = connect(database.target);
    try {
      const rows = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db);
      const names = rows.rows.map((r) => r.name);
      assert.ok(names.length >= 10, names.join());
      assert.equal(new Set(names).size, names.length, 'no migration applied twice');
    } finally {
      await db.destroy();
    }
  });

  it('honour keys, provider keys, evaluators and revocations made through any node', async () => {
    const org = await cli('orgs', 'create', 'several-nodes');
    const made = await cli('keys', 'create', '--org', org.id, '--name', 'shared');
    for (const node of nodes) {
      assert.equal((await api(node.baseUrl, 'GET', '/api/evaluators/', { key: made.key })).status, 200);
    }

    // A provider key registered through node 0 is used by the others within their one-second cache.
    const providerKey = 'sk-registered-through-node-0';
    const registered = await api(nodes[0].baseUrl, 'POST', '/api/provider-keys/', {
      key: made.key,
      body: { provider: 'openai', api_key: providerKey },
    });
    assert.equal(registered.status, 201, registered.text);
    for (const node of nodes.slice(1)) {
      await within(1500, 'a provider key registered elsewhere', async () => {
        const res = await api(node.baseUrl, 'POST', '/api/embeddings', {
          key: made.key,
          body: { model: 'text-embedding-3-small', input: 'hello' },
        });
        return res.status === 200 && fake.requests.at(-1)!.headers.authorization === `Bearer ${providerKey}`;
      });
    }

    // An evaluator made through node 1 scores a log through node 2 at once (nothing of it is cached).
    const evaluator = await api(nodes[1].baseUrl, 'POST', '/api/evaluators/', {
      key: made.key,
      body: { name: 'Made on node 1' },
    });
    assert.equal(evaluator.status, 201, evaluator.text);
    const log = await api(nodes[2].baseUrl, 'POST', '/api/request-logs/create/', {
      key: made.key,
      body: { model: 'gpt-4o', prompt_messages: [{ role: 'user', content: 'hi' }] },
    });
    assert.equal(log.status, 201, log.text);
    const score = await api(nodes[2].baseUrl, 'POST', `/api/request-logs/${log.body.unique_id}/scores/`, {
      key: made.key,
      body: { evaluator_slug: evaluator.body.evaluator_slug, numerical_value: 4 },
    });
    assert.equal(score.status, 201, score.text);
    const listed = await api(nodes[0].baseUrl, 'GET', '/api/evaluators/', { key: made.key });
    assert.ok(JSON.stringify(listed.body).includes('Made on node 1'));

    // Revoked through the CLI: every node refuses the key within its one-second cache window.
    await cli('keys', 'revoke', made.id);
    for (const node of nodes) {
      await within(1500, 'a revocation', async () => {
        return (await api(node.baseUrl, 'GET', '/api/evaluators/', { key: made.key })).status === 401;
      });
    }
  });

  it('share one response cache and its settings', async () => {
    const org = await cli('orgs', 'create', 'several-nodes-cache');
    const { key } = await cli('keys', 'create', '--org', org.id, '--name', 'cache');
    const registered = await api(nodes[0].baseUrl, 'POST', '/api/provider-keys/', {
      key,
      body: { provider: 'openai', api_key: 'sk-cache-test' },
    });
    assert.equal(registered.status, 201, registered.text);
    // The organization's default, set through node 0, reaches every node within a second.
    const patched = await api(nodes[0].baseUrl, 'PATCH', '/api/settings/', { key, body: { cache_enabled: true } });
    assert.equal(patched.status, 200, patched.text);
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `shared ${Date.now()}` }] };
    const chat = (node: number) => api(nodes[node].baseUrl, 'POST', '/api/chat/completions', { key, body });
    await within(1500, 'node 1 reads the settings made through node 0', async () => {
      const res = await chat(1);
      return res.status === 200 && res.headers.get('x-gatelog-cache') !== null;
    });
    // Stored by node 1 (its write follows the answer): nodes 0 and 2 answer from it.
    for (const node of [0, 2]) {
      await within(1500, `node ${node} answers from the shared cache`, async () => {
        return (await chat(node)).headers.get('x-gatelog-cache') === 'HIT';
      });
    }
    const seen = fake.chats.length;
    assert.equal((await chat(2)).headers.get('x-gatelog-cache'), 'HIT');
    assert.equal(fake.chats.length, seen);
    // Emptied through node 2: node 0 misses.
    assert.equal((await api(nodes[2].baseUrl, 'DELETE', '/api/cache/', { key })).status, 200);
    assert.equal((await chat(0)).headers.get('x-gatelog-cache'), 'MISS');
  });

  it('store every acknowledged log exactly once, and every node lists and counts them exactly', async () => {
    const org = await cli('orgs', 'create', 'several-nodes-logs');
    const { key } = await cli('keys', 'create', '--org', org.id, '--name', 'load');
    assert.equal(
      (
        await api(nodes[0].baseUrl, 'POST', '/api/provider-keys/', {
          key,
          body: { provider: 'openai', api_key: 'sk-x' },
        })
      ).status,
      201,
    );
    const models = ['gpt-4o', 'gpt-4o-mini', 'claude-3-5-sonnet'];
    const acknowledged: string[] = [];
    const expectedByModel = new Map<string, number>();
    const count = (model: string, n = 1) => expectedByModel.set(model, (expectedByModel.get(model) ?? 0) + n);
    // Spread over the nodes, 12 at a time: single logs, batches of 10, and proxied calls (logged by the
    // node that proxied them, after it answered).
    const jobs = Array.from({ length: 240 }, (_, i) => async () => {
      const node = nodes[i % NODES];
      const model = models[i % models.length];
      if (i % 8 === 0) {
        const res = await api(node.baseUrl, 'POST', '/api/embeddings', {
          key,
          body: { model: 'text-embedding-3-small', input: `call ${i}` },
        });
        assert.equal(res.status, 200, res.text);
        acknowledged.push(res.headers.get('x-gatelog-log-id')!);
        count('text-embedding-3-small');
      } else if (i % 8 === 1) {
        const batch = Array.from({ length: 10 }, (_, j) => ({
          model,
          customer_identifier: `c${j % 3}`,
          output: `${i}.${j}`,
        }));
        const res = await api(node.baseUrl, 'POST', '/api/request-logs/batch/', { key, body: { logs: batch } });
        assert.equal(res.status, 201, res.text);
        acknowledged.push(...(res.body.unique_ids as string[]));
        count(model, 10);
      } else {
        const res = await api(node.baseUrl, 'POST', '/api/request-logs/create/', {
          key,
          body: { model, customer_identifier: `c${i % 3}`, output: `${i}` },
        });
        assert.equal(res.status, 201, res.text);
        acknowledged.push(res.body.unique_id);
        count(model);
      }
    });
    for (let i = 0; i < jobs.length; i += 12) await Promise.all(jobs.slice(i, i + 12).map((job) => job()));
    assert.equal(new Set(acknowledged).size, acknowledged.length);

    const want = [...expectedByModel].map(([value, n]) => ({ value, count: n })).sort((a, b) => b.count - a.count);
    for (const node of nodes) {
      // Proxied calls' logs are written a moment after their answer.
      await within(5000, 'every log listed', async () => {
        const res = await api(node.baseUrl, 'GET', '/api/request-logs/list/?page_size=1', { key });
        return res.body.count === acknowledged.length;
      });
      const res = await api(node.baseUrl, 'GET', '/api/request-logs/list/?page_size=1&fetch_filters=true', { key });
      const choices = (res.body.filter_options.model.value_choices as { value: string; count: number }[])
        .map((c) => ({ value: c.value, count: c.count }))
        .sort((a, b) => b.count - a.count || a.value.localeCompare(b.value));
      assert.deepEqual(
        choices,
        want.sort((a, b) => b.count - a.count || a.value.localeCompare(b.value)),
      );
    }
    const { db } = connect(database.target);
    try {
      const rows = await sql<{ n: string; distinct_ids: string }>`
        select count(*) as n, count(distinct unique_id) as distinct_ids from logs
        where organization_id = ${org.id}`.execute(db);
      assert.equal(Number(rows.rows[0].n), acknowledged.length, 'stored exactly once');
      assert.equal(Number(rows.rows[0].distinct_ids), acknowledged.length);
      const stored = await sql<{
        unique_id: string;
      }>`select unique_id from logs where organization_id = ${org.id}`.execute(db);
      assert.deepEqual(new Set(stored.rows.map((r) => r.unique_id)), new Set(acknowledged));
    } finally {
      await db.destroy();
    }
  });
});
