/** What a rate-limit bucket holds and what a call draws from it (buckets.ts). */

/** The window a limit is counted over. */
export const WINDOW_MS = 60_000;

/** How far a call moves a bucket's clocks: its requests' and its tokens' draining time, ms. */
export interface Draw {
  requestsMs: number;
  tokensMs: number;
}

/** A bucket's clocks after a draw, or as they stand. */
export interface BucketState {
  requestsAt: number;
  tokensAt: number;
}
