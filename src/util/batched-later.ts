/**
 * Background work done in batches: what is queued during a short wait is handed over together, so that
 * many calls' bookkeeping (settling budgets, correcting rate limits) costs one database transaction
 * rather than one each. Batches run one after another; a failed one is dropped (its callers chose work
 * that may be lost: a reservation then expires, a correction comes late). settled() runs what is queued
 * at once and waits for it.
 */
export class BatchedLater<T> {
  private queue: T[] = [];
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> = Promise.resolve();
  private active = 0;

  constructor(
    private readonly run: (items: T[]) => Promise<void>,
    private readonly waitMs: number,
  ) {}

  add(item: T): void {
    this.queue.push(item);
    this.timer ??= setTimeout(() => this.flush(), this.waitMs);
  }

  async settled(): Promise<void> {
    while (this.queue.length > 0 || this.active > 0) {
      this.flush();
      await this.running;
    }
  }

  private flush(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.queue.length === 0) return;
    const items = this.queue;
    this.queue = [];
    this.active += 1;
    this.running = this.running
      .then(() => this.run(items))
      .catch(() => undefined)
      .finally(() => {
        this.active -= 1;
      });
  }
}
