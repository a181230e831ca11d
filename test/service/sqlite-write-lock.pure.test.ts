/**
 * A statement waiting for SQLite's write lock wakes when a connection of this process releases it
 * (src/db/sqlite-write-lock.ts), not at the end of its pause; with no release, the pause ends it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { releasedOrAfter, writeLockReleased } from '../../src/db/sqlite-write-lock.js';

describe('waiting for the SQLite write lock', { timeout: 20_000 }, () => {
  it('wakes every waiter when the lock is released, long before their pause ends', async () => {
    const waits = [releasedOrAfter(60_000), releasedOrAfter(60_000)];
    writeLockReleased();
    await Promise.all(waits);
  });

  it('ends at the pause without a release, and a later release wakes only the waiters of then', async () => {
    const started = performance.now();
    await releasedOrAfter(20);
    assert.ok(performance.now() - started >= 19, 'the pause was waited');
    const later = releasedOrAfter(60_000);
    writeLockReleased();
    await later;
    // Nobody waits now: a release is a no-op.
    writeLockReleased();
  });
});
