/**
 * The pure pieces of routing (docs/api.md "Retries and fallbacks"): how long a retry waits, and which
 * model of a load-balance group a call starts with.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { retryWait } from '../../src/gateway/core/targets.js';
import { MAX_RETRY_WAIT_S, modelsToTry, noRouting, readRouting } from '../../src/gateway/core/routing-params.js';
import { retryAfterSeconds } from '../../src/providers/upstream-client.js';

const routing = (retry_after: number) =>
  readRouting({ retry_params: { retry_enabled: true, num_retries: 10, retry_after } });

describe('the wait before a retry', () => {
  it('is retry_after before the first retry, doubled before each next one', () => {
    const r = routing(0.25);
    assert.deepEqual(
      [0, 1, 2, 3, 4].map((retry) => retryWait(r, retry, undefined)),
      [0.25, 0.5, 1, 2, 4],
    );
    // The default retry_after is 0.2 s.
    const d = readRouting({ retry_params: { retry_enabled: true } });
    assert.deepEqual(
      [0, 1, 2].map((retry) => retryWait(d, retry, undefined)),
      [0.2, 0.4, 0.8],
    );
  });

  it("is the provider's retry-after when that is longer, and its own when the provider's is shorter", () => {
    const r = routing(0.5);
    assert.equal(retryWait(r, 0, 3), 3);
    assert.equal(retryWait(r, 2, 3), 3);
    // Doubled past what the provider asked: the doubled wait.
    assert.equal(retryWait(r, 3, 3), 4);
    assert.equal(retryWait(r, 1, 0.1), 1);
    assert.equal(retryWait(r, 0, 0), 0.5);
  });

  it('is never longer than 60 s, however long either asks', () => {
    assert.equal(MAX_RETRY_WAIT_S, 60);
    const r = routing(10);
    assert.deepEqual(
      [0, 1, 2, 3, 9].map((retry) => retryWait(r, retry, undefined)),
      [10, 20, 40, 60, 60],
    );
    assert.equal(retryWait(routing(0.2), 0, 3600), 60);
    assert.equal(retryWait(routing(0.2), 0, 60.5), 60);
    assert.equal(retryWait(routing(60), 0, undefined), 60);
    // retry_after itself is refused above 60 s (a 400 naming it).
    assert.throws(
      () => routing(61),
      (err: { status: number; param: string }) => err.status === 400 && err.param === 'retry_params.retry_after',
    );
  });

  it("reads the provider's retry-after as seconds or as an HTTP date", () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 0);
    assert.equal(retryAfterSeconds('1', now), 1);
    assert.equal(retryAfterSeconds('2.5', now), 2.5);
    assert.equal(retryAfterSeconds(new Date(now + 7000).toUTCString(), now), 7);
    assert.equal(retryAfterSeconds(new Date(now - 7000).toUTCString(), now), 0);
    assert.equal(retryAfterSeconds(undefined, now), undefined);
    assert.equal(retryAfterSeconds('soon', now), undefined);
  });

  it('is asked for no retries without retry_params, nor with retry_enabled false', () => {
    assert.equal(noRouting().retries, 0);
    assert.equal(readRouting({}).retries, 0);
    assert.equal(readRouting({ retry_params: { retry_enabled: false, num_retries: 5 } }).retries, 0);
    assert.equal(readRouting({ retry_params: { retry_enabled: true } }).retries, 3);
    // A form field carries it as JSON text.
    assert.equal(readRouting({ retry_params: '{"retry_enabled": true, "num_retries": 2}' }).retries, 2);
  });
});

describe('the model a load-balance group picks', () => {
  const group = readRouting({
    load_balance_group: {
      models: [
        { model: 'heavy', weight: 9 },
        { model: 'light', weight: 1 },
      ],
    },
    fallback_models: ['spare', 'heavy'],
  });

  it('splits [0, 1) in proportion to the weights', () => {
    for (const [random, model] of [
      [0, 'heavy'],
      [0.5, 'heavy'],
      [0.8999, 'heavy'],
      [0.9, 'light'],
      [0.9999, 'light'],
    ] as const) {
      assert.equal(modelsToTry('ignored', group, random)[0], model, `random ${random}`);
    }
  });

  it('puts the fallbacks after the pick, each model once, and none with disable_fallback', () => {
    assert.deepEqual(modelsToTry('ignored', group, 0.95), ['light', 'spare', 'heavy']);
    assert.deepEqual(modelsToTry('ignored', group, 0.1), ['heavy', 'spare']);
    assert.deepEqual(modelsToTry('ignored', { ...group, disableFallback: true }, 0.95), ['light']);
  });
});
