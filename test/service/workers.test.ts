/**
 * `gatelog serve --workers 2` (docs/decisions.md "Worker processes") on a PostgreSQL database or one
 * SQLite file, over real HTTP: the cluster gives connections to the workers in turn and /metrics sums
 * both; a live tail held by one worker gets the logs written through the other; a worker killed with
 * SIGKILL is replaced while the port keeps answering; SIGTERM stops both, each writing every log it
 * acknowledged. Requests go on connections of their own (support/workers.ts), so that they spread.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { Agent, fetch as undiciFetch } from 'undici';
import { connect } from '../../src/db/connect.js';
import { waitForExit } from '../support/cli.js';
import type { TestDatabase } from '../support/database.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { until } from '../support/live-tail.js';
import { servedDatabase } from '../support/served-database.js';
import { answeringPids, fresh, freshTail, healthOf, spawnWorkers } from '../support/workers.js';

/** GET /health calls this file makes before it reads /metrics: every one counted, whichever worker. */
const HEALTH_CALLS = 10;

describe('gatelog serve --workers 2', () => {
  let database: TestDatabase;
  let key: string;
  let fake: FakeUpstream;
  let server: { child: ChildProcess; baseUrl: string };
  let output = '';

  /** Writes a log through the logging API on a fresh connection; its unique_id. */
  const createLog = async (model: string) => {
    const res = await fresh(server.baseUrl, 'POST', '/api/request-logs/create/', { key, body: { model } });
    assert.equal(res.status, 201, res.text);
    return res.body.unique_id as string;
  };

  before(async () => {
    let env: Record<string, string>;
    ({ database, env, key } = await servedDatabase('workers'));
    fake = await startFakeUpstream();
    server = await spawnWorkers({ ...env, GATELOG_OPENAI_BASE_URL: fake.baseUrl }, 2, (text) => (output += text));
  });
  after(async () => {
    if (server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGTERM');
      await waitForExit(server.child);
    }
    await fake.close();
    await database.drop();
  });

  it('logs one start-up line, spreads connections over both workers, and sums their figures', async () => {
    assert.equal(output.match(/gatelog listening at /g)?.length, 1, output);
    assert.match(output, /gatelog listening at [^"]* · 2 worker processes"/);
    // Each worker writes its own line on its own stdout, after it listens: the primary's line, written
    // once both listen, may come before one of theirs on a busy machine.
    const workerLines = () => output.match(/"msg":"worker [12] \(pid \d+\) listening at /g)?.length ?? 0;
    await until('both workers’ start-up lines', 10_000, () => workerLines() >= 2);
    assert.equal(workerLines(), 2, output);
    const pids = await answeringPids(server.baseUrl, HEALTH_CALLS);
    assert.equal(pids.size, 2, 'two processes answered');
    const metrics = await fresh(server.baseUrl, 'GET', '/metrics');
    assert.equal(metrics.status, 200);
    const counted = /^gatelog_http_requests_total\{method="GET",route="\/health",status="200"\} (\d+)$/m.exec(
      metrics.text,
    );
    assert.equal(Number(counted?.[1]), HEALTH_CALLS, 'both workers counted');
  });

  it('delivers to live tails held by either worker the logs written through both', async () => {
    // Two tails opened one after the other: the cluster gives their connections to the two workers.
    const tails = [await freshTail(server.baseUrl, key), await freshTail(server.baseUrl, key)];
    try {
      const written: string[] = [];
      for (let i = 0; i < 6; i++) written.push(await createLog(`tailed-${i}`));
      // The tail's promise: a log within a second of its write, whichever node (here, worker) wrote it;
      // twice that on a loaded machine. Each log was written (committed) when its call was answered.
      for (const tail of tails) {
        await until('every log in the tail', 2000, () => written.every((id) => tail.uniqueIds.includes(id)));
        assert.deepEqual(tail.uniqueIds, written, 'each once, in the order written');
      }
    } finally {
      for (const tail of tails) tail.close();
    }
  });

  it('replaces a worker killed with SIGKILL, the port answering throughout', async () => {
    let victim = await healthOf(server.baseUrl);
    while (victim.worker !== 2) victim = await healthOf(server.baseUrl);
    process.kill(victim.pid, 'SIGKILL');
    // A connection the cluster handed to the worker as it died would be lost with it (docs/decisions.md
    // "Worker processes"); once the primary has seen it exit, every one is answered (by worker 1) until
    // worker 2 is back, in a new process.
    const started = performance.now();
    await until('the primary sees the worker exit', 30_000, () =>
      output.includes(`worker 2 (pid ${victim.pid}) killed by SIGKILL; starting another`),
    );
    for (;;) {
      const now = await healthOf(server.baseUrl);
      if (now.worker === 2 && now.pid !== victim.pid) break;
      assert.ok(performance.now() - started < 60_000, 'worker 2 was not replaced within 60 s');
    }
    const pids = await answeringPids(server.baseUrl, 6);
    assert.equal(pids.size, 2);
    assert.ok(!pids.has(victim.pid));
  });

  it('stops both workers on SIGTERM, each writing every log it acknowledged', async () => {
    // Proxied calls the provider holds past the signal, and logging-API calls around it.
    fake.chat({ firstEventDelayMs: 1500 });
    const proxied = Array.from({ length: 6 }, async () => {
      const dispatcher = new Agent();
      const client = new OpenAI({
        apiKey: key,
        baseURL: `${server.baseUrl}/api`,
        maxRetries: 0,
        fetch: undiciFetch as unknown as typeof fetch,
        fetchOptions: { dispatcher } as never,
      });
      try {
        const { data, response } = await client.chat.completions
          .create({
            model: 'gpt-4o-mini',
            messages: [{ role: 'user', content: 'in flight' }],
            stream: true,
            customer_credentials: { openai: { api_key: 'sk-workers' } },
          } as OpenAI.ChatCompletionCreateParamsStreaming)
          .withResponse();
        for await (const _ of data);
        return response.headers.get('x-gatelog-log-id');
      } catch {
        return null;
      } finally {
        await dispatcher.close();
      }
    });
    const creates = Array.from({ length: 200 }, (_, i) => createLog(`stopping-${i}`).catch(() => null));
    await Promise.all(creates.slice(0, 100));
    await until('the proxied calls reach the provider', 30_000, () => fake.chats.length >= 6);
    server.child.kill('SIGTERM');
    const acknowledged = [...(await Promise.all(proxied)), ...(await Promise.all(creates))].filter(
      (id): id is string => id !== null,
    );
    assert.equal(await waitForExit(server.child), 0, output.slice(-2000));
    assert.ok(acknowledged.length >= 106, `acknowledged ${acknowledged.length}`);
    // Its output may still be on its way when it has exited: read up to the primary's last line.
    await until('the primary says every worker stopped', 10_000, () =>
      output.includes('"msg":"stopped: all 2 workers have exited"'),
    );
    assert.equal(
      output.match(/"msg":"stopped: \d+ logs written since start/g)?.length,
      2,
      'each worker said it stopped',
    );

    const { db } = connect(database.target);
    try {
      const stored = new Set((await db.selectFrom('logs').select('unique_id').execute()).map((r) => r.unique_id));
      assert.deepEqual(
        acknowledged.filter((id) => !stored.has(id)),
        [],
        'every acknowledged log is stored',
      );
    } finally {
      await db.destroy();
    }
  });
});
