/**
 * The circuit breaker's states on an injected clock (docs/api.md "Retries and fallbacks"): closed until
 * failures in a row reach the threshold, open for the cool-down, then one probe let through — an answer
 * closes it, a failure opens it for a new cool-down.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CircuitBreaker } from '../src/gateway/circuit-breaker.js';

const UP = 'http://127.0.0.1:9/v1';
const OTHER = 'http://127.0.0.1:10/v1';

function breaker(failures = 3, cooldownMs = 1000) {
  const clock = { now: 1_000_000 };
  const b = new CircuitBreaker({ failures, cooldownMs }, () => clock.now);
  return { b, clock };
}

/** Fails the upstream `n` times in a row. */
const fail = (b: CircuitBreaker, n: number, upstream = UP) => {
  for (let i = 0; i < n; i++) b.failure(upstream);
};

describe('the circuit breaker', () => {
  it('opens after the threshold of failures in a row, and only for that upstream', () => {
    const { b } = breaker(3);
    fail(b, 2);
    assert.equal(b.allow(UP), true);
    fail(b, 1);
    assert.equal(b.allow(UP), false);
    assert.equal(b.allow(OTHER), true);
    assert.equal(b.skipped, 1);
    assert.deepEqual([...b.openCircuits()], [['127.0.0.1:9', 1]]);
  });

  it('counts failures in a row: an answer in between starts the count again', () => {
    const { b } = breaker(3);
    fail(b, 2);
    b.success(UP);
    fail(b, 2);
    assert.equal(b.allow(UP), true);
    fail(b, 1);
    assert.equal(b.allow(UP), false);
  });

  it('skips the upstream for the whole cool-down', () => {
    const { b, clock } = breaker(2, 1000);
    fail(b, 2);
    const openedAt = clock.now;
    for (const later of [0, 1, 500, 999]) {
      clock.now = openedAt + later;
      assert.equal(b.allow(UP), false, `${later} ms into the cool-down`);
    }
    clock.now = openedAt + 1000;
    assert.equal(b.allow(UP), true, 'its end');
  });

  it('after the cool-down lets one probe through; an answer closes the circuit', () => {
    const { b, clock } = breaker(2, 1000);
    fail(b, 2);
    clock.now += 1000;
    assert.equal(b.allow(UP), true, 'the probe');
    // While the probe is out, every other call still skips the upstream.
    assert.equal(b.allow(UP), false);
    assert.equal(b.allow(UP), false);
    b.success(UP);
    // Closed: every call goes there again, at once and later.
    for (let i = 0; i < 5; i++) assert.equal(b.allow(UP), true);
    assert.equal(b.openCircuits().size, 0);
    // And a new count of failures starts from zero: one failure does not reopen it.
    fail(b, 1);
    assert.equal(b.allow(UP), true);
  });

  it('after the cool-down, a probe that fails opens the circuit for a new cool-down', () => {
    const { b, clock } = breaker(2, 1000);
    fail(b, 2);
    clock.now += 1500;
    assert.equal(b.allow(UP), true, 'the probe');
    // The probe takes 600 ms to fail: the new cool-down counts from its failure, not from its start.
    clock.now += 600;
    fail(b, 1);
    assert.equal(b.allow(UP), false, 'reopened at once by one failure');
    clock.now += 999;
    assert.equal(b.allow(UP), false, 'for a whole new cool-down');
    clock.now += 1;
    assert.equal(b.allow(UP), true, 'then a new probe');
    assert.equal(b.allow(UP), false);
    b.success(UP);
    assert.equal(b.allow(UP), true);
  });

  it('lets another probe through when the first never reported, one cool-down later', () => {
    const { b, clock } = breaker(1, 1000);
    fail(b, 1);
    clock.now += 1000;
    assert.equal(b.allow(UP), true);
    clock.now += 999;
    assert.equal(b.allow(UP), false);
    clock.now += 1;
    assert.equal(b.allow(UP), true);
  });

  it('never opens with a threshold of 0', () => {
    const { b } = breaker(0);
    fail(b, 100);
    assert.equal(b.allow(UP), true);
    assert.equal(b.skipped, 0);
  });
});
