/**
 * A worker's side of the cluster (primary.ts): it tells the primary when it listens or why it could not
 * start, answers the primary's gatherings of /metrics figures, asks it for every worker's figures when
 * it is scraped, and stops gracefully when the primary is gone.
 */
import cluster from 'node:cluster';
import type { Registry } from 'prom-client';
import { isGatelogMessage, type PrimaryMessage, type WorkerMessage } from './messages.js';

/** How long a scraped worker waits for the primary's sum (which waits for the workers at most 2 s). */
const METRICS_TIMEOUT_MS = 5_000;

function send(message: WorkerMessage): Promise<void> {
  return new Promise((resolve) => {
    if (!process.connected) {
      resolve();
      return;
    }
    process.send!(message, undefined, {}, () => resolve());
  });
}

/**
 * In a cluster worker that cannot start: tells the primary why (one line, which the primary prints once
 * for all workers); resolves once it has it. false in any other process (nothing sent).
 */
export async function reportStartFailure(message: string): Promise<boolean> {
  if (!cluster.isWorker) return false;
  await send({ type: 'gatelog:failed', message });
  return true;
}

export class WorkerLink {
  private next = 0;
  private readonly asked = new Map<number, (text: string | null) => void>();

  private constructor() {
    process.on('message', (message: unknown) => {
      if (!isGatelogMessage<PrimaryMessage>(message) || message.type !== 'gatelog:metrics-text') return;
      this.asked.get(message.id)?.(message.text);
    });
  }

  /** The link of this process when it is a cluster worker; null otherwise. */
  static ofThisProcess(): WorkerLink | null {
    return cluster.isWorker ? new WorkerLink() : null;
  }

  /** It listens at `addresses` (the first is the one clients use). */
  ready(addresses: string[]): void {
    void send({ type: 'gatelog:ready', addresses });
  }

  /** Answers the primary's gatherings with `registry`'s figures. */
  answerGatherings(registry: Registry): void {
    process.on('message', (message: unknown) => {
      if (!isGatelogMessage<PrimaryMessage>(message) || message.type !== 'gatelog:gather-metrics') return;
      void registry
        .getMetricsAsJSON()
        .then((metrics) => send({ type: 'gatelog:metrics-json', id: message.id, metrics }));
    });
  }

  /** Every worker's figures summed, in the Prometheus text format; null when the primary does not answer. */
  allMetrics(): Promise<string | null> {
    const id = ++this.next;
    return new Promise((resolve) => {
      const done = (text: string | null) => {
        clearTimeout(timer);
        this.asked.delete(id);
        resolve(text);
      };
      const timer = setTimeout(() => done(null), METRICS_TIMEOUT_MS);
      this.asked.set(id, done);
      void send({ type: 'gatelog:metrics', id });
    });
  }

  /**
   * Calls `stop` when the primary is gone (killed): the port's listening socket went with it, so this
   * worker gets no new connections, and it stops as on SIGTERM — its calls in flight finished, its logs
   * written — rather than at once, as node:cluster would have it.
   */
  onPrimaryGone(stop: () => void): void {
    const worker = cluster.worker!;
    worker.once('disconnect', () => {
      // node:cluster exits a worker whose channel closed unless it is marked as leaving on purpose.
      worker.exitedAfterDisconnect = true;
      stop();
    });
  }
}
