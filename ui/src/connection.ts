/**
 * Whether gatelog is answering, as the UI's own calls find out: a call that gets no answer (the network
 * failed, or a proxy in front said 502/504) or a "retry later" 503 marks gatelog down, any answer marks it
 * up again. The header shows a banner while it is down; screens keep what they show and retry with
 * backoff (retryDelay) instead of replacing it with the error.
 */
import { signal } from '@preact/signals';

export interface Outage {
  /** What the banner says after "gatelog is not answering" (e.g. the database is unavailable). */
  reason: string | null;
  since: number;
}

export const outage = signal<Outage | null>(null);

export function markDown(reason: string | null): void {
  if (!outage.value || outage.value.reason !== reason)
    outage.value = { reason, since: outage.value?.since ?? Date.now() };
}

export function markUp(): void {
  if (outage.value) outage.value = null;
}

/** Backoff between retries: 1 s, 2 s, 4 s … up to 30 s. */
export const retryDelay = (attempt: number): number => Math.min(30_000, 1000 * 2 ** Math.max(0, attempt));
