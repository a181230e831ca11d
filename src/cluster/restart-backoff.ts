/**
 * How long the primary waits before it forks again a worker that exited (primary.ts). A worker that had
 * served a while and then crashed is replaced at once; one that crashes again soon after it starts (a
 * fault that a restart does not cure) waits longer each time, so that it does not spin.
 */

/** A worker that served this long after it became ready was stable: its slot's count starts again. */
export const STABLE_AFTER_MS = 30_000;
const FIRST_PAUSE_MS = 1_000;
const LONGEST_PAUSE_MS = 30_000;

export class RestartBackoff {
  /** Exits in a row of workers that had not been stable. */
  private quickExits = 0;

  /**
   * A worker of this slot exited; `readyForMs`: how long it had served (null: it never became ready).
   * Answers the pause before its replacement: none after a stable run or a first quick exit, then 1 s,
   * 2 s, 4 s … up to 30 s.
   */
  exited(readyForMs: number | null): number {
    if (readyForMs !== null && readyForMs >= STABLE_AFTER_MS) this.quickExits = 0;
    this.quickExits += 1;
    if (this.quickExits === 1) return 0;
    return Math.min(FIRST_PAUSE_MS * 2 ** (this.quickExits - 2), LONGEST_PAUSE_MS);
  }
}
