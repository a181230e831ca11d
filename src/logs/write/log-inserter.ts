/** What the log writer needs of a store: a batch written atomically (inserter.ts has the kinds). */
import type { NewLog } from './new-log.js';

export interface LogInserter {
  insert(logs: readonly NewLog[]): Promise<void>;
  /** Whether a failed insert means the store is unavailable (retry later) rather than a bad row. */
  isOutage(err: unknown): Promise<boolean>;
  /** Releases what the inserter holds (a worker thread); called once the writer has drained. */
  close?(): Promise<void>;
}
