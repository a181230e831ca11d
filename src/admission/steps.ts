/**
 * What a call's admission takes from the database (admission-ledger.ts): a reservation of each budget
 * that applies to it, then a draw from each rate limit's bucket — all of them, or none.
 */
import type { Reservation, Standing } from '../budgets/reservation.js';
import type { BucketState, Draw } from '../limits/draw.js';

/** Holds `reservation` of its budget's period, when the period's spent + reserved stays within `limit`. */
export interface BudgetStep {
  kind: 'budget';
  reservation: Reservation;
  limit: number;
}

/** Draws `draw` from `bucket` at `now` (epoch ms), when what is outstanding drains by `limit`. */
export interface BucketStep {
  kind: 'bucket';
  bucket: string;
  now: number;
  draw: Draw;
  limit: number;
}

export type AdmissionStep = BudgetStep | BucketStep;

/** Every step taken (each one's standing or bucket state, in order), or the first that did not fit. */
export type Admission =
  { taken: true; results: readonly (Standing | BucketState)[] } | { taken: false; refusedAt: number };

/** What a taken step's row (its two numbers, as both databases return them) says: a standing or a bucket's clocks. */
export function stepResult(step: AdmissionStep, a: number, b: number): Standing | BucketState {
  return step.kind === 'budget' ? { spent: a, reserved: Math.max(0, b) } : { requestsAt: a, tokensAt: b };
}

/** Sums of many reservations in floating point: a hair of tolerance keeps N exact fits fitting. */
export const EPSILON_USD = 1e-9;
