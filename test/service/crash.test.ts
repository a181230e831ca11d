/**
 * kill -9 in the middle of a steady stream of logging-API calls: after a restart, every log that was
 * acknowledged (201) is there. Repeated, on a fresh process each time.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Agent } from 'undici';
import { connect } from '../../src/db/connect.js';
import { spawnServer, waitForExit } from '../support/cli.js';
import type { TestDatabase } from '../support/database.js';
import { servedDatabase } from '../support/served-database.js';

const ROUNDS = 3;

describe('a crash of the process (kill -9)', () => {
  let database: TestDatabase;
  let env: Record<string, string>;
  let key: string;

  before(async () => {
    ({ database, env, key } = await servedDatabase('crash-org'));
  });
  after(() => database.drop());

  it(`loses no acknowledged log (${ROUNDS} crashes under load)`, async () => {
    const acknowledged = new Set<string>();
    for (let round = 0; round < ROUNDS; round++) {
      const { child, baseUrl } = await spawnServer(env);
      const dispatcher = new Agent({ connections: 32 });
      let running = true;
      const post = async (path: string, body: unknown) => {
        try {
          const res = await fetch(`${baseUrl}${path}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify(body),
            // @ts-expect-error undici's fetch option
            dispatcher,
          });
          if (res.status !== 201) return;
          const answer = (await res.json()) as { unique_id?: string; unique_ids?: string[] };
          if (answer.unique_id) acknowledged.add(answer.unique_id);
          for (const id of answer.unique_ids ?? []) acknowledged.add(id);
        } catch {
          // the process died under this call: not acknowledged
        }
      };
      // 16 clients, each sending create and batch calls back to back.
      const clients = Array.from({ length: 16 }, async (_, c) => {
        for (let i = 0; running; i++) {
          if (i % 5 === 0)
            await post(
              '/api/request-logs/batch/',
              Array.from({ length: 20 }, () => ({ model: `b${c}` })),
            );
          else await post('/api/request-logs/create/', { model: `c${c}`, metadata: { round, i } });
        }
      });
      // Killed at a moment that turns with the round, once this round has had calls acknowledged (a loaded
      // machine may need longer to get there).
      const before = acknowledged.size;
      await new Promise((resolve) => setTimeout(resolve, 700 + round * 300));
      for (let waited = 0; acknowledged.size - before < 400 && waited < 60_000; waited += 50) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      child.kill('SIGKILL');
      await waitForExit(child);
      running = false;
      await Promise.all(clients);
      await dispatcher.close();
    }
    assert.ok(acknowledged.size > 1000, `only ${acknowledged.size} acknowledged`);

    const { db } = connect(database.target);
    const stored = new Set<string>();
    for (const row of await db.selectFrom('logs').select('unique_id').execute()) stored.add(row.unique_id);
    await db.destroy();
    const missing = [...acknowledged].filter((id) => !stored.has(id));
    assert.deepEqual(missing.slice(0, 5), [], `${missing.length} of ${acknowledged.size} acknowledged logs lost`);
  });
});
