/**
 * Token counts for the proxy, computed on a worker thread (token-worker.ts). Most calls need none: a
 * text short in bytes cannot pass a token limit (tokens.ts), and those never leave the event loop.
 */
import { AppError } from '../../errors.js';
import { WorkerPool } from '../../workers/pool.js';
import type { TokenJob } from './token-worker.js';
import type { TextLimits, TextMeasure } from './tokens.js';

export class TokenCounter {
  private readonly pool = new WorkerPool<TokenJob, TextMeasure>(new URL('./token-worker.js', import.meta.url), {
    size: 1,
    timeoutError: () => new AppError(503, 'busy', 'Token counting took too long.'),
  });

  /** Checks `texts` against `limits` (see measureTexts); texts too short to matter are not sent. */
  async measure(texts: readonly string[], limits: TextLimits): Promise<TextMeasure> {
    if (!limits.countAll && !mayPass(texts, limits)) return { overText: null, overTotal: null, total: null };
    return this.pool.run({ texts: [...texts], limits });
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** Whether any limit could be passed: some text has more bytes than `perText`, or all more than `total`. */
function mayPass(texts: readonly string[], limits: TextLimits): boolean {
  // A UTF-16 code unit is at most 3 UTF-8 bytes: a cheap bound before any exact byte length.
  let upper = 0;
  for (const text of texts) {
    upper += text.length * 3;
    if (text.length * 3 > limits.perText && Buffer.byteLength(text, 'utf8') > limits.perText) return true;
  }
  if (upper <= limits.total) return false;
  return texts.reduce((sum, text) => sum + Buffer.byteLength(text, 'utf8'), 0) > limits.total;
}
