/**
 * /metrics across the workers of `gatelog serve --workers N`, in the primary (docs/decisions.md "Worker
 * processes"). A scrape reaches one worker, chosen by the cluster; that worker asks the primary, which
 * asks every worker that has become ready for its figures and sums them (prom-client's aggregation:
 * counters and histograms added, each gauge as it declares — most added, a timestamp the latest), so a
 * scrape sees the whole machine whichever worker answers it. A worker that does not answer within
 * GATHER_TIMEOUT_MS (it is stuck, or exiting) is left out of that scrape.
 */
import type { Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import type { MetricsJson, PrimaryMessage } from './messages.js';

const GATHER_TIMEOUT_MS = 2_000;

interface Gathering {
  /** Cluster ids of the workers asked that have not answered yet. */
  readonly waiting: Set<number>;
  readonly answers: MetricsJson[];
  finish(): void;
}

export class ClusterMetrics {
  private next = 0;
  private readonly gatherings = new Map<number, Gathering>();

  /** `ready`: the workers that can answer now. */
  constructor(private readonly ready: () => Worker[]) {}

  /** `asker` was scraped (its request `id`): it gets every worker's figures summed, or null. */
  async answer(asker: Worker, id: number): Promise<void> {
    let text: string | null = null;
    try {
      text = await this.gather();
    } catch {
      // Figures that cannot be summed (never seen): the scrape fails rather than show one worker's.
    }
    const reply: PrimaryMessage = { type: 'gatelog:metrics-text', id, text };
    if (asker.isConnected()) asker.send(reply);
  }

  /** A worker's answer to a gathering. */
  received(worker: Worker, id: number, metrics: MetricsJson): void {
    const gathering = this.gatherings.get(id);
    if (!gathering?.waiting.delete(worker.id)) return;
    gathering.answers.push(metrics);
    if (gathering.waiting.size === 0) gathering.finish();
  }

  /** A worker exited: none of the gatherings waits for it any longer. */
  gone(worker: Worker): void {
    for (const gathering of [...this.gatherings.values()]) {
      if (gathering.waiting.delete(worker.id) && gathering.waiting.size === 0) gathering.finish();
    }
  }

  private gather(): Promise<string> {
    const id = ++this.next;
    const workers = this.ready().filter((w) => w.isConnected());
    return new Promise<string>((resolve, reject) => {
      const gathering: Gathering = {
        waiting: new Set(workers.map((w) => w.id)),
        answers: [],
        finish: () => {
          clearTimeout(timer);
          this.gatherings.delete(id);
          AggregatorRegistry.aggregate(gathering.answers).metrics().then(resolve, reject);
        },
      };
      const timer = setTimeout(() => gathering.finish(), GATHER_TIMEOUT_MS);
      this.gatherings.set(id, gathering);
      const request: PrimaryMessage = { type: 'gatelog:gather-metrics', id };
      for (const worker of workers) worker.send(request);
      if (workers.length === 0) gathering.finish();
    });
  }
}
