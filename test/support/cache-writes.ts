/**
 * Waiting for the response cache's writes, which follow an answer off its path: by /metrics'
 * `gatelog_cache_writes_total`, so that a test waits as long as a write takes, and no longer.
 */
import assert from 'node:assert/strict';

/** Answers stored in the cache so far, by /metrics. */
export async function cacheWrites(baseUrl: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const found = /^gatelog_cache_writes_total (\d+)/m.exec(text);
  assert.ok(found, 'gatelog_cache_writes_total in /metrics');
  return Number(found[1]);
}

/**
 * Answers stored so far, once the writes of earlier calls have landed (the count holds still for
 * 200 ms): where a test then asserts that nothing more was stored, an earlier call's write cannot count.
 */
export async function settledWrites(baseUrl: string): Promise<number> {
  let count = await cacheWrites(baseUrl);
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const now = await cacheWrites(baseUrl);
    if (now === count) return count;
    count = now;
  }
}

/** Waits (at most 5 s) until the cache has stored more than `before` answers. */
export async function storedAfter(baseUrl: string, before: number): Promise<void> {
  for (let waited = 0; (await cacheWrites(baseUrl)) <= before; waited += 25) {
    assert.ok(waited < 5000, 'the answer was stored in the cache');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Asserts that nothing more than `before` was stored, once a write would have landed: a write is
 * issued when a call ends, before its log is recorded, and takes a few milliseconds.
 */
export async function nothingStoredAfter(baseUrl: string, before: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(await cacheWrites(baseUrl), before, 'nothing was stored in the cache');
}
