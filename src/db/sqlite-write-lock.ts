/**
 * SQLite's write lock, as this process sees it: the log writer's and the bulk thread's connections say
 * when one of their statements or transactions has ended (writeLockReleased), and a main-connection
 * statement waiting for the lock (whenNotBusy) tries again then rather than at the end of its pause.
 * A call's admission on SQLite needs the lock; behind a log batch or a search-index batch it would
 * otherwise wait up to twice their length (the pauses double), which is a proxied call's tail latency.
 * Another process's lock says nothing here: its waiters keep their timed pauses.
 */

let waiters: (() => void)[] = [];

/** A connection of this process ended a statement or a transaction that may have held the write lock. */
export function writeLockReleased(): void {
  if (waiters.length === 0) return;
  const woken = waiters;
  waiters = [];
  for (const wake of woken) wake();
}

/** Resolves after `ms`, or as soon as a connection of this process releases the write lock. */
export function releasedOrAfter(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      waiters = waiters.filter((w) => w !== done);
      resolve();
    }
    waiters.push(done);
  });
}
