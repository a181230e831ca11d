/**
 * The circuit breaker's states on an injected clock (docs/api.md "Retries and fallbacks"): closed until
 * failures in a row reach the threshold, open for the cool-down, then one probe let through — an answer
 * closes it, a failure opens it for a new cool-down. One organization's failures open only its own
 * circuit; connections never made, from several organizations, open the upstream's for everyone.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CircuitBreaker, type TryVerdict } from '../../src/gateway/core/circuit-breaker.js';

const UP = 'http://127.0.0.1:9/v1';
const OTHER = 'http://127.0.0.1:10/v1';
const ORG = 'org-a';
const ORG_B = 'org-b';
const ORG_C = 'org-c';

function breaker(failures = 3, cooldownMs = 1000) {
  const clock = { now: 1_000_000 };
  const b = new CircuitBreaker({ failures, cooldownMs }, () => clock.now);
  return { b, clock };
}

/** Fails the upstream `n` times in a row (5xx answers, unless said). */
const fail = (b: CircuitBreaker, n: number, upstream = UP, org = ORG, verdict: TryVerdict = 'failed') => {
  for (let i = 0; i < n; i++) b.record(org, upstream, verdict);
};
const allow = (b: CircuitBreaker, upstream = UP, org = ORG) => b.allow(org, upstream);
const success = (b: CircuitBreaker, upstream = UP, org = ORG) => b.record(org, upstream, 'answered');

describe('the circuit breaker', () => {
  it('opens after the threshold of failures in a row, and only for that upstream', () => {
    const { b } = breaker(3);
    fail(b, 2);
    assert.equal(allow(b), true);
    fail(b, 1);
    assert.equal(allow(b), false);
    assert.equal(allow(b, OTHER), true);
    assert.equal(b.skipped, 1);
    assert.deepEqual([...b.openCircuits()], [['127.0.0.1:9', 1]]);
  });

  it('counts failures in a row: an answer in between starts the count again', () => {
    const { b } = breaker(3);
    fail(b, 2);
    success(b);
    fail(b, 2);
    assert.equal(allow(b), true);
    fail(b, 1);
    assert.equal(allow(b), false);
  });

  it('skips the upstream for the whole cool-down', () => {
    const { b, clock } = breaker(2, 1000);
    fail(b, 2);
    const openedAt = clock.now;
    for (const later of [0, 1, 500, 999]) {
      clock.now = openedAt + later;
      assert.equal(allow(b), false, `${later} ms into the cool-down`);
    }
    clock.now = openedAt + 1000;
    assert.equal(allow(b), true, 'its end');
  });

  it('after the cool-down lets one probe through; an answer closes the circuit', () => {
    const { b, clock } = breaker(2, 1000);
    fail(b, 2);
    clock.now += 1000;
    assert.equal(allow(b), true, 'the probe');
    // While the probe is out, every other call still skips the upstream.
    assert.equal(allow(b), false);
    assert.equal(allow(b), false);
    success(b);
    // Closed: every call goes there again, at once and later.
    for (let i = 0; i < 5; i++) assert.equal(allow(b), true);
    assert.equal(b.openCircuits().size, 0);
    // And a new count of failures starts from zero: one failure does not reopen it.
    fail(b, 1);
    assert.equal(allow(b), true);
  });

  it('after the cool-down, a probe that fails opens the circuit for a new cool-down', () => {
    const { b, clock } = breaker(2, 1000);
    fail(b, 2);
    clock.now += 1500;
    assert.equal(allow(b), true, 'the probe');
    // The probe takes 600 ms to fail: the new cool-down counts from its failure, not from its start.
    clock.now += 600;
    fail(b, 1);
    assert.equal(allow(b), false, 'reopened at once by one failure');
    clock.now += 999;
    assert.equal(allow(b), false, 'for a whole new cool-down');
    clock.now += 1;
    assert.equal(allow(b), true, 'then a new probe');
    assert.equal(allow(b), false);
    success(b);
    assert.equal(allow(b), true);
  });

  it('lets another probe through when the first never reported, one cool-down later', () => {
    const { b, clock } = breaker(1, 1000);
    fail(b, 1);
    clock.now += 1000;
    assert.equal(allow(b), true);
    clock.now += 999;
    assert.equal(allow(b), false);
    clock.now += 1;
    assert.equal(allow(b), true);
  });

  it("opens one organization's circuit on its 5xx and timeouts, never another's", () => {
    const { b } = breaker(3);
    fail(b, 3);
    assert.equal(allow(b), false, 'the organization whose calls failed skips it');
    assert.equal(allow(b, UP, ORG_B), true, 'another organization still calls it');
    fail(b, 5, UP, ORG_C, 'failed');
    assert.equal(allow(b, UP, ORG_B), true, 'a third failing as well changes nothing for it');
    // B's answer closes no circuit but its own (A's calls still skip the upstream until A's probe).
    success(b, UP, ORG_B);
    assert.equal(allow(b), false);
  });

  it('opens the shared circuit only for connections refused from several organizations', () => {
    const { b, clock } = breaker(3, 1000);
    // One organization alone, however many times: only its own circuit.
    fail(b, 10, UP, ORG, 'unreachable');
    assert.equal(allow(b), false);
    assert.equal(allow(b, UP, ORG_B), true);
    // A second organization's refused connection, in the same run: the upstream is down for everyone.
    fail(b, 1, UP, ORG_B, 'unreachable');
    assert.equal(allow(b, UP, ORG_C), false, 'a third organization skips it without a failure of its own');
    clock.now += 1000;
    assert.equal(allow(b, UP, ORG_C), true, 'the probe after the cool-down');
    success(b, UP, ORG_C);
    assert.equal(allow(b, UP, ORG_B), true, 'closed for everyone by an answer');
  });

  it('starts the shared count again whenever the upstream is reached, even by a failure', () => {
    const { b } = breaker(3);
    fail(b, 2, UP, ORG, 'unreachable');
    // A 5xx: the upstream took the connection; what failed may be the request's.
    fail(b, 1, UP, ORG_B, 'failed');
    fail(b, 2, UP, ORG_B, 'unreachable');
    assert.equal(allow(b, UP, ORG_C), true, 'two in a row since the upstream was reached');
    fail(b, 1, UP, ORG, 'unreachable');
    assert.equal(allow(b, UP, ORG_C), false);
  });

  it('never opens with a threshold of 0', () => {
    const { b } = breaker(0);
    fail(b, 100);
    assert.equal(allow(b), true);
    assert.equal(b.skipped, 0);
  });
});
