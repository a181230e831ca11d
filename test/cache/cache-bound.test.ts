/**
 * GATELOG_CACHE_MAX_MB end to end (docs/api.md "Response cache"): gatelog with a 1 MB cache, filled past
 * it through real calls, one after another and in bursts, never holds more than 1 MB — read from the
 * entries themselves after every write and, during a burst, as often as a reader can — and keeps the
 * newest answers. An organization's burst evicts its own entries, not another's smaller share. Two nodes
 * on one PostgreSQL database writing at once keep the one bound between them.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import OpenAI from 'openai';
import { cacheUsage } from '../../src/cache/cache-store.js';
import { connect, type DbHandle } from '../../src/db/connect.js';
import type { Database } from '../../src/db/schema.js';
import { storedAfter, settledWrites } from '../support/cache-writes.js';
import { runGatelog, spawnServer, stopServers } from '../support/cli.js';
import { createTestDatabase, testDialect, type TestDatabase } from '../support/database.js';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';
import { api, type Tenant, servedEnv } from '../support/harness.js';
import { PROVIDER_KEY, type ProxyTestApp, startProxyApp } from '../support/proxy-app.js';

/** 3072 float32s: 12 KB, kept as 16 KB of base64; 64 of them fill 1 MB. */
const MODEL = 'text-embedding-3-large';
const ENTRY_BYTES = 16_384;
const BOUND = 1024 * 1024;

/** The bytes the cache holds, read from its entries (not from its own count), by organization. */
async function storedBytes(db: Kysely<Database>): Promise<{ total: number; byOrg: Map<string, number> }> {
  const rows = await db
    .selectFrom('cache_entries')
    .select((eb) => ['organization_id', eb.fn.sum<number>('size').as('bytes')])
    .groupBy('organization_id')
    .execute();
  const byOrg = new Map(rows.map((r) => [r.organization_id, Number(r.bytes)]));
  return { total: [...byOrg.values()].reduce((a, b) => a + b, 0), byOrg };
}

/** Reads the stored bytes again and again, as fast as a reader can, until stopped; answers the largest. */
function sampleWhile(db: Kysely<Database>): { stop(): Promise<{ max: number; samples: number }> } {
  let running = true;
  let max = 0;
  let samples = 0;
  const loop = (async () => {
    while (running) {
      max = Math.max(max, (await storedBytes(db)).total);
      samples++;
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { max, samples };
    },
  };
}

/** The cache's own count of its bytes is the bytes its entries hold. */
async function assertCounted(db: Kysely<Database>): Promise<void> {
  const counted = new Map([...(await cacheUsage(db))].filter(([, bytes]) => bytes > 0));
  assert.deepEqual(counted, (await storedBytes(db)).byOrg, 'the counted bytes are the stored bytes');
}

const inputs = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix} ${i}`);

describe('a response cache bounded by GATELOG_CACHE_MAX_MB', () => {
  let p: ProxyTestApp;
  /** A connection of the test's own, as another reader of the database would have. */
  let reader: DbHandle;
  const run = `bound ${Date.now()}`;
  const embed = async (client: OpenAI, input: string[]) => {
    const seen = p.fake.requests.length;
    const { data, response } = await client.embeddings
      .create({ model: MODEL, input, cache_enabled: true } as OpenAI.EmbeddingCreateParams)
      .withResponse();
    assert.equal(data.data.length, input.length);
    return { cache: response.headers.get('x-gatelog-cache'), sent: p.fake.requests.length - seen };
  };

  before(async () => {
    p = await startProxyApp({ GATELOG_CACHE_MAX_MB: '1' });
    reader = connect(p.t.database.target);
  });
  after(async () => {
    await reader?.close();
    await p?.close();
  });

  it('never holds more than its bound: after every write, and during a burst', async () => {
    // One call after another, 64 KB each, 1.25 MB in all: read after each write has landed.
    for (let call = 0; call < 20; call++) {
      const writes = await settledWrites(p.t.baseUrl);
      assert.equal((await embed(p.client, inputs(`${run} one by one ${call}`, 4))).cache, 'MISS');
      await storedAfter(p.t.baseUrl, writes);
      const { total } = await storedBytes(reader.db);
      assert.ok(total <= BOUND, `${total} bytes stored after call ${call}`);
      assert.ok(total >= Math.min(BOUND, (call + 1) * 4 * ENTRY_BYTES), `${total} bytes: the cache keeps what fits`);
    }
    const sizes = await reader.db.selectFrom('cache_entries').select('size').distinct().execute();
    assert.deepEqual(
      sizes.map((r) => Number(r.size)),
      [ENTRY_BYTES],
      'every entry is of the known size',
    );

    // 16 calls at once, 128 KB each: 2 MB written as fast as gatelog answers, read all along.
    const sampler = sampleWhile(reader.db);
    const writes = await settledWrites(p.t.baseUrl);
    const answers = await Promise.all(
      Array.from({ length: 16 }, (_, call) => embed(p.client, inputs(`${run} burst ${call}`, 8))),
    );
    assert.ok(answers.every((a) => a.cache === 'MISS'));
    await storedAfter(p.t.baseUrl, writes);
    await settledWrites(p.t.baseUrl);
    const { max, samples } = await sampler.stop();
    assert.ok(samples > 10, `the store was read ${samples} times during the burst`);
    assert.ok(max <= BOUND, `at most ${max} bytes seen during the burst`);
    const { total } = await storedBytes(reader.db);
    assert.equal(total, BOUND, 'full after the burst');
    await assertCounted(reader.db);
  });

  it("keeps another organization's entries through one organization's burst larger than the bound", async () => {
    const b: Tenant = await p.t.tenant();
    const registered = await api(p.t.baseUrl, 'POST', '/api/provider-keys/', {
      key: b.key,
      body: { provider: 'openai', api_key: PROVIDER_KEY },
    });
    assert.equal(registered.status, 201, registered.text);
    const clientB = new OpenAI({ apiKey: b.key, baseURL: `${p.t.baseUrl}/api`, maxRetries: 0 });
    const kept = inputs(`${run} kept by b`, 2);
    let writes = await settledWrites(p.t.baseUrl);
    assert.equal((await embed(clientB, kept)).cache, 'MISS');
    await storedAfter(p.t.baseUrl, writes);

    // The first organization, already holding the whole bound, writes 1.25 MB more at once.
    const sampler = sampleWhile(reader.db);
    writes = await settledWrites(p.t.baseUrl);
    await Promise.all(Array.from({ length: 10 }, (_, call) => embed(p.client, inputs(`${run} a burst ${call}`, 8))));
    await storedAfter(p.t.baseUrl, writes);
    await settledWrites(p.t.baseUrl);
    const { max } = await sampler.stop();
    assert.ok(max <= BOUND, `at most ${max} bytes seen during the burst`);
    const { byOrg } = await storedBytes(reader.db);
    assert.equal(byOrg.get(b.org.id), 2 * ENTRY_BYTES, "the second organization's entries are all there");
    assert.equal(byOrg.get(p.a.org.id), BOUND - 2 * ENTRY_BYTES, 'the first keeps the rest');
    await assertCounted(reader.db);
    assert.deepEqual(await embed(clientB, kept), { cache: 'HIT', sent: 0 });
    // The first organization's oldest answers went.
    assert.equal((await embed(p.client, inputs(`${run} one by one 0`, 4))).cache, 'MISS');
  });
});

describe('one bound for two nodes on one PostgreSQL database', { skip: testDialect !== 'postgres' }, () => {
  let database: TestDatabase;
  let fake: FakeUpstream;
  let reader: DbHandle;
  const nodes: { child: ChildProcess; baseUrl: string }[] = [];
  let env: Record<string, string>;

  before(async () => {
    database = await createTestDatabase();
    fake = await startFakeUpstream();
    env = servedEnv(database, { GATELOG_OPENAI_BASE_URL: fake.baseUrl, GATELOG_CACHE_MAX_MB: '1' });
    nodes.push(await spawnServer(env));
    nodes.push(await spawnServer(env));
    reader = connect(database.target);
  });
  after(async () => {
    await stopServers(nodes);
    await reader?.close();
    await fake.close();
    await database.drop();
  });

  it('holds while both write bursts at once', async () => {
    const cli = async (...args: string[]) => {
      const res = await runGatelog([...args, '--json'], env);
      assert.equal(res.code, 0, res.stderr);
      return JSON.parse(res.stdout) as Record<string, string>;
    };
    const org = await cli('orgs', 'create', 'cache-bound-nodes');
    const { key } = await cli('keys', 'create', '--org', org.id, '--name', 'both');
    const registered = await api(nodes[0].baseUrl, 'POST', '/api/provider-keys/', {
      key,
      body: { provider: 'openai', api_key: PROVIDER_KEY },
    });
    assert.equal(registered.status, 201, registered.text);
    const clients = nodes.map((n) => new OpenAI({ apiKey: key, baseURL: `${n.baseUrl}/api`, maxRetries: 0 }));

    const sampler = sampleWhile(reader.db);
    // Each node 1 MB of answers, both at once: 2 MB for a 1 MB bound.
    await Promise.all(
      clients.flatMap((client, node) =>
        Array.from({ length: 8 }, (_, call) =>
          client.embeddings.create({
            model: MODEL,
            input: inputs(`nodes ${node} ${call}`, 8),
            cache_enabled: true,
          } as OpenAI.EmbeddingCreateParams),
        ),
      ),
    );
    for (const node of nodes) await settledWrites(node.baseUrl);
    const { max, samples } = await sampler.stop();
    assert.ok(samples > 10, `the store was read ${samples} times`);
    assert.ok(max <= BOUND, `at most ${max} bytes seen`);
    const { total } = await storedBytes(reader.db);
    assert.equal(total, BOUND, 'full, each node having written past the bound');
    await assertCounted(reader.db);
  });
});
