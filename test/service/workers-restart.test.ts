/**
 * A worker that keeps failing as it starts (docs/decisions.md "Worker processes"): after one of the
 * workers of `gatelog serve --workers 2` is killed, its replacements cannot start (the pricing file went
 * bad meanwhile); the primary starts each next one after a longer pause rather than spinning, worker 1
 * answers throughout, and once the file is mended worker 2 is back.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stopServers } from '../support/cli.js';
import type { TestDatabase } from '../support/database.js';
import { servedDatabase } from '../support/served-database.js';
import { healthOf, spawnWorkers } from '../support/workers.js';

describe('a worker that cannot start again', () => {
  let database: TestDatabase;
  let dir: string;
  let pricing: string;
  let server: { child: ChildProcess; baseUrl: string };
  let output = '';

  /** The primary's lines about worker 2 exiting, in order. */
  const exits = () =>
    output
      .split('\n')
      .filter((line) => line.includes('"msg":"worker 2 (pid '))
      .map((line) => JSON.parse(line) as { restartInMs?: number; reason?: string; signal: string | null })
      .filter((line) => line.restartInMs !== undefined);

  before(async () => {
    let env: Record<string, string>;
    ({ database, env } = await servedDatabase('workers-restart'));
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatelog-workers-restart-'));
    pricing = path.join(dir, 'pricing.json');
    fs.writeFileSync(pricing, '{}');
    server = await spawnWorkers({ ...env, GATELOG_PRICING_FILE: pricing }, 2, (text) => (output += text));
  });
  after(async () => {
    await stopServers([server]);
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('starts the next replacement after a longer pause each time, and the port answers throughout', async () => {
    let victim = await healthOf(server.baseUrl);
    while (victim.worker !== 2) victim = await healthOf(server.baseUrl);
    fs.writeFileSync(pricing, 'not json');
    process.kill(victim.pid, 'SIGKILL');
    // Killed, then two replacements that fail as they start: restarted at once, then after 1 s, then 2 s.
    // Asked from the moment the primary saw the kill (a connection handed to the worker as it died is
    // lost with it: workers.test.ts); the replacements fail before they listen, so none is handed one.
    const started = performance.now();
    while (exits().length < 1) {
      assert.ok(performance.now() - started < 30_000, 'the primary sees the worker exit');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    while (exits().length < 3) {
      assert.equal((await healthOf(server.baseUrl)).worker, 1, 'worker 1 answers');
      assert.ok(performance.now() - started < 60_000, `three exits of worker 2 within 60 s: ${output.slice(-3000)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const [killed, ...failed] = exits().slice(0, 3);
    assert.equal(killed.signal, 'SIGKILL');
    assert.deepEqual(
      exits()
        .slice(0, 3)
        .map((e) => e.restartInMs),
      [0, 1000, 2000],
    );
    for (const exit of failed) assert.match(exit.reason ?? '', /^GATELOG_PRICING_FILE: cannot read /);

    fs.writeFileSync(pricing, '{}');
    const mended = performance.now();
    for (;;) {
      const now = await healthOf(server.baseUrl);
      if (now.worker === 2) {
        assert.notEqual(now.pid, victim.pid);
        break;
      }
      assert.ok(performance.now() - mended < 60_000, 'worker 2 back within 60 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
});
