import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Agent, request as undiciRequest } from 'undici';
import { connect } from '../../src/db/connect.js';
import { spawnServer, waitForExit } from '../support/cli.js';
import type { TestDatabase } from '../support/database.js';
import { servedDatabase } from '../support/served-database.js';
import { startFakeUpstream } from '../support/fake-upstream.js';
import { stallBoundMs } from '../support/responsive.js';

describe('graceful shutdown of `gatelog serve`', () => {
  let database: TestDatabase;
  let env: Record<string, string>;
  let key: string;

  before(async () => {
    ({ database, env, key } = await servedDatabase('shutdown-org'));
  });
  after(() => database.drop());

  it('writes every acknowledged log before exiting on SIGTERM', async () => {
    const { child, baseUrl } = await spawnServer(env);
    const post = (i: number) =>
      fetch(`${baseUrl}/api/request-logs/create/`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'shutdown', metadata: { i } }),
      }).then(
        async (res) => (res.status === 201 ? ((await res.json()) as { unique_id: string }).unique_id : null),
        () => null,
      );
    // 500 concurrent calls; SIGTERM arrives while the later ones are still in flight.
    const calls = Array.from({ length: 500 }, (_, i) => post(i));
    await Promise.all(calls.slice(0, 250));
    child.kill('SIGTERM');
    const acknowledged = (await Promise.all(calls)).filter((id): id is string => id !== null);
    assert.equal(await waitForExit(child), 0);
    assert.ok(acknowledged.length >= 250, `acknowledged ${acknowledged.length}`);

    const again = await spawnServer(env);
    try {
      const res = await fetch(
        `${again.baseUrl}/api/request-logs/list/?page_size=1000&start_time=2000-01-01T00:00:00Z`,
        {
          headers: { authorization: `Bearer ${key}` },
        },
      );
      const body = (await res.json()) as { count: number; results: { unique_id: string }[] };
      const stored = new Set(body.results.map((r) => r.unique_id));
      const missing = acknowledged.filter((id) => !stored.has(id));
      assert.deepEqual(missing, []);
      assert.equal(body.count, acknowledged.length);
    } finally {
      again.child.kill('SIGTERM');
      await waitForExit(again.child);
    }
  });

  it('logs a proxied call whose client hung up, when SIGTERM comes before the provider answers', async () => {
    const fake = await startFakeUpstream();
    fake.behave({ kind: 'slow', ms: 800 });
    const { child, baseUrl } = await spawnServer({ ...env, GATELOG_OPENAI_BASE_URL: fake.baseUrl });
    const abort = new AbortController();
    const call = fetch(`${baseUrl}/api/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'text-embedding-3-small',
        input: 'goodbye',
        customer_credentials: { openai: { api_key: 'sk-shutdown' } },
      }),
      signal: abort.signal,
    }).catch(() => null);
    for (let waited = 0; fake.requests.length === 0; waited += 10) {
      assert.ok(waited < 5000, 'the call never reached the provider');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // The client is gone, so the HTTP server has no connection left to wait for; the call goes on.
    abort.abort();
    await call;
    child.kill('SIGTERM');
    assert.equal(await waitForExit(child), 0);
    await fake.close();

    const { db } = connect(database.target);
    const logs = await db
      .selectFrom('logs')
      .select(['status_code', 'embedding_count'])
      .where('log_type', '=', 'embedding')
      .execute();
    await db.destroy();
    assert.deepEqual(logs, [{ status_code: 200, embedding_count: 1 }]);
  });

  it('serves and logs a request that arrives on an open connection while stopping, and says what it wrote', async () => {
    let output = '';
    let onOutput = () => {};
    const { child, baseUrl } = await spawnServer(env, (text) => {
      output += text;
      onOutput();
    });
    const seen = (pattern: RegExp) =>
      new Promise<void>((resolve) => {
        onOutput = () => pattern.test(output) && resolve();
        onOutput();
      });
    const socket = net.connect(Number(new URL(baseUrl).port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    // A whole request, and half of the next in the same write: once the first is answered the server
    // has read the second's start, so the connection is busy, not idle (which shutdown closes).
    socket.write(
      'GET /health HTTP/1.1\r\nHost: gatelog\r\n\r\nPOST /api/request-logs/create/ HTTP/1.1\r\nHost: gatelog\r\n',
    );
    await new Promise<void>((resolve) => {
      const check = () => (/\r\n\r\n\{[^]*\}/.test(answer) ? resolve() : socket.once('data', check));
      check();
    });
    answer = '';
    child.kill('SIGTERM');
    await seen(/shutting down/);
    const body = JSON.stringify({ model: 'during-shutdown' });
    socket.write(
      `Authorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    await closed;
    assert.equal(await waitForExit(child), 0);
    // Its stdout may still hold the last lines when it exits: read up to the last one.
    await seen(/"msg":"stopped: /);
    assert.match(answer, /^HTTP\/1\.1 201 /, answer);
    assert.match(answer, /\r\nconnection: close\r\n/i, answer);
    const { unique_id: id } = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { unique_id: string };
    const { db } = connect(database.target);
    const stored = await db.selectFrom('logs').select('model').where('unique_id', '=', id).execute();
    await db.destroy();
    assert.deepEqual(stored, [{ model: 'during-shutdown' }]);
    const stopped = output.split('\n').find((line) => line.includes('"msg":"stopped: ')) ?? '';
    assert.match(stopped, /"msg":"stopped: \d+ logs written since start, [1-9]\d* of them while stopping"/, output);
  });

  it('ends within a second when only an idle keep-alive client is connected', async () => {
    const { child, baseUrl } = await spawnServer(env);
    const agent = new Agent({ keepAliveTimeout: 60_000 });
    const res = await undiciRequest(`${baseUrl}/health`, { dispatcher: agent });
    assert.equal(res.statusCode, 200);
    await res.body.text();
    const started = performance.now();
    child.kill('SIGTERM');
    assert.equal(await waitForExit(child), 0);
    const took = performance.now() - started;
    await agent.close();
    assert.ok(took < stallBoundMs(2000), `exited ${took.toFixed(0)} ms after SIGTERM`);
  });

  it('ends within GATELOG_SHUTDOWN_TIMEOUT_MS whatever clients and providers do, logging the calls it ended', async () => {
    const fake = await startFakeUpstream();
    fake.behave({ kind: 'hang' });
    const output: string[] = [];
    const { child, baseUrl } = await spawnServer(
      {
        ...env,
        GATELOG_OPENAI_BASE_URL: fake.baseUrl,
        // 3 s: at the deadline less 600 ms the hung call is ended; then the logs are written and it exits.
        GATELOG_SHUTDOWN_TIMEOUT_MS: '3000',
      },
      (text) => output.push(text),
    );
    // A call the provider never answers, and a client sending its body one byte every 200 ms.
    const hung = fetch(`${baseUrl}/api/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'text-embedding-3-small',
        input: 'never answered',
        customer_credentials: { openai: { api_key: 'sk-shutdown' } },
      }),
    }).then(async (res) => ({ status: res.status, body: await res.text(), connection: res.headers.get('connection') }));
    const { hostname, port } = new URL(baseUrl);
    const slow = net.connect(Number(port), hostname, () =>
      slow.write(
        `POST /api/request-logs/create/ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
          'Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{',
      ),
    );
    slow.on('error', () => {});
    const drip = setInterval(() => slow.writable && slow.write(' '), 200);
    for (let waited = 0; fake.requests.length === 0; waited += 10) {
      assert.ok(waited < 5000, 'the call never reached the provider');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const started = performance.now();
    child.kill('SIGTERM');
    const code = await waitForExit(child);
    const took = performance.now() - started;
    clearInterval(drip);
    slow.destroy();
    await fake.close();
    assert.equal(code, 0, output.join(''));
    assert.ok(took < stallBoundMs(3500), `exited ${took.toFixed(0)} ms after SIGTERM`);
    const answer = await hung;
    assert.equal(answer.status, 503);
    assert.match(answer.body, /shutting_down/);
    assert.equal(answer.connection, 'close');

    const { db } = connect(database.target);
    const logs = await db
      .selectFrom('logs')
      .select(['status_code'])
      .where('log_type', '=', 'embedding')
      .where('status_code', '=', 503)
      .execute();
    await db.destroy();
    assert.equal(logs.length, 1, 'the ended call was logged');
  });
});
