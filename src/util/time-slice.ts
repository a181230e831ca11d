/**
 * A long loop on the event loop gives it a turn every few milliseconds, so that other requests (a health
 * check among them) are answered while it runs.
 */
import { setImmediate } from 'node:timers/promises';

export class TimeSlice {
  private since = performance.now();

  constructor(private readonly ms = 10) {}

  /** Resolves at once within the slice; after a turn of the event loop once the slice is spent. */
  async pause(): Promise<void> {
    if (performance.now() - this.since < this.ms) return;
    await setImmediate();
    this.since = performance.now();
  }
}
