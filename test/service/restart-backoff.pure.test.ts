/** The pause before the primary forks again a worker that exited (src/cluster/restart-backoff.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RestartBackoff, STABLE_AFTER_MS } from '../../src/cluster/restart-backoff.js';

describe('restart backoff', () => {
  it('replaces at once, then pauses longer for each quick exit in a row, up to 30 s', () => {
    const backoff = new RestartBackoff();
    const pauses = [5_000, null, null, null, null, null, null, null].map((readyFor) => backoff.exited(readyFor));
    assert.deepEqual(pauses, [0, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]);
  });

  it('starts again after a worker that served long enough', () => {
    const backoff = new RestartBackoff();
    for (let i = 0; i < 5; i++) backoff.exited(null);
    assert.equal(backoff.exited(STABLE_AFTER_MS), 0);
    assert.equal(backoff.exited(100), 1000);
  });
});
