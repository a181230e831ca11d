/**
 * The ranges a log's numbers can really have, shared by every route that writes one (the logging API,
 * hand-written dataset logs). Bounded so that every accepted log is stored alike on both databases
 * (integer columns are 32-bit) and reads back (start_time = timestamp − latency stays a valid date).
 */
import { z } from 'zod';

export const LOG_LIMITS = {
  /** Token and other counts, and their total (stored in the same 32-bit columns). */
  count: 2_147_483_647,
  /** Durations, in seconds: a year. */
  seconds: 31_536_000,
  /** USD for one call. */
  cost: 1_000_000,
  tokensPerSecond: 1_000_000_000,
};

export const tokenCount = z.number().int().nonnegative().max(LOG_LIMITS.count, `must be at most ${LOG_LIMITS.count}`);

export const seconds = z
  .number()
  .finite()
  .nonnegative()
  .max(LOG_LIMITS.seconds, `must be at most ${LOG_LIMITS.seconds} (a year, in seconds)`);

export const usd = z.number().finite().nonnegative().max(LOG_LIMITS.cost, `must be at most ${LOG_LIMITS.cost} (USD)`);

/**
 * The issue for a prompt and completion whose total (total_request_tokens, a 32-bit column too) would
 * not fit, named at the completion's path; null when it fits.
 */
export function tokenTotalIssue(
  prompt: number | undefined,
  completion: number | undefined,
  path: (string | number)[],
): { code: 'custom'; message: string; path: (string | number)[] } | null {
  if ((prompt ?? 0) + (completion ?? 0) <= LOG_LIMITS.count) return null;
  return {
    code: 'custom',
    message: `prompt and completion tokens must total at most ${LOG_LIMITS.count}`,
    path,
  };
}
