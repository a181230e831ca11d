/**
 * What the primary of `gatelog serve --workers N` and its workers say to each other over the cluster's
 * IPC channel (primary.ts, worker-link.ts). Every message carries a `gatelog:` type, so that one of
 * node:cluster's own, or prom-client's, is never taken for one of these.
 */
import type { Registry } from 'prom-client';

/** A worker's metrics as prom-client's getMetricsAsJSON gives them. */
export type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

export type WorkerMessage =
  /** It listens (at these addresses, the first of them the one clients use): it may be given calls. */
  | { type: 'gatelog:ready'; addresses: string[] }
  /** It could not start: the one line a single process would have printed (without "gatelog: "). */
  | { type: 'gatelog:failed'; message: string }
  /** A client asked it for /metrics: the primary gathers every worker's figures and answers `id`. */
  | { type: 'gatelog:metrics'; id: number }
  /** Its figures, answering the primary's gathering `id`. */
  | { type: 'gatelog:metrics-json'; id: number; metrics: MetricsJson };

export type PrimaryMessage =
  /** Send your figures (answer with gatelog:metrics-json and this id). */
  | { type: 'gatelog:gather-metrics'; id: number }
  /** Every worker's figures summed, answering gatelog:metrics `id` (null: gathering them failed). */
  | { type: 'gatelog:metrics-text'; id: number; text: string | null };

export function isGatelogMessage<T extends { type: string }>(message: unknown): message is T {
  const type = (message as { type?: unknown } | null)?.type;
  return typeof type === 'string' && type.startsWith('gatelog:');
}
