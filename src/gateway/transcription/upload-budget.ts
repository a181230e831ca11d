/**
 * The bytes of audio uploads held in memory by all calls at once (GATELOG_UPLOAD_MEMORY_BYTES). Each
 * upload is kept whole until it has been sent on; past the bound a call is refused with 503 and
 * Retry-After, so that many large uploads at once slow callers down instead of running the process out
 * of memory (and losing the logs it holds).
 */
import { AppError } from '../../errors.js';

export class UploadBudget {
  private held = 0;

  constructor(readonly maxBytes: number) {}

  /** Takes `bytes` of the budget, or refuses the call when that would pass it. */
  take(bytes: number): void {
    if (this.held + bytes > this.maxBytes) {
      throw new AppError(
        503,
        'upload_memory_full',
        `gatelog is holding ${this.maxBytes} bytes of uploads, its bound (GATELOG_UPLOAD_MEMORY_BYTES); retry shortly.`,
        null,
        { 'retry-after': '1' },
      );
    }
    this.held += bytes;
  }

  give(bytes: number): void {
    this.held = Math.max(0, this.held - bytes);
  }

  get bytesHeld(): number {
    return this.held;
  }
}
