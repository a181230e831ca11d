/** Waits for a condition read from outside (an API, a page): asked again until it holds, never a fixed sleep. */
import assert from 'node:assert/strict';

/** Asks `test` every `everyMs` until it is true (then true), for `ms` at most (then false). */
export async function poll(test: () => Promise<boolean>, ms = 5000, everyMs = 50): Promise<boolean> {
  for (const end = Date.now() + ms; ; await new Promise((r) => setTimeout(r, everyMs))) {
    if (await test()) return true;
    if (Date.now() > end) return false;
  }
}

/** Asks `test` until it is true; past `ms`, fails saying `what` (and `detail`). */
export async function pollUntil(
  test: () => Promise<boolean>,
  what: string,
  options: { ms?: number; detail?: () => Promise<string> } = {},
): Promise<void> {
  if (await poll(test, options.ms)) return;
  assert.fail(`timed out waiting for ${what}${options.detail ? ` (${await options.detail()})` : ''}`);
}
