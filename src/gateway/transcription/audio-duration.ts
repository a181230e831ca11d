/**
 * How many seconds of audio a file holds, read from the file by music-metadata (docs/api.md
 * "Speech-to-text proxy"): what a transcription costs when the provider does not say.
 *
 * Never on the event loop (docs/decisions.md "Audio duration"): music-metadata reads an ID3v2 tag, a
 * FLAC or Ogg comment block or an MP4 `ilst` whole and synchronously, and a crafted one of a few MB held
 * the event loop for seconds and took 150× its size in heap. The metadata blocks that can be found by
 * their headers are left out first (audio-metadata-skip.ts), so that a large tag does not cost a real
 * file its duration; what is left is parsed on a worker thread under a deadline and a heap limit, and a
 * file that passes either has no duration (null).
 */
import { AppError } from '../../errors.js';
import { WorkerPool } from '../../workers/pool.js';
import type { DurationJob } from './audio-duration-worker.js';
import { type AudioFormat, AUDIO_MIME_TYPES } from './audio-format.js';
import { withoutMetadata } from './audio-metadata-skip.js';

/**
 * The longest a duration is waited for, from the call: 25 MB of MP3 frames without an index are counted
 * one by one in about a second on an idle core, and the call goes upstream meanwhile.
 */
export const DURATION_DEADLINE_MS = 10_000;

/** A thread's heap: a real file needs a few MB; a crafted tag left in takes 150× its size. */
const WORKER_HEAP_MB = 128;

export class AudioDurations {
  private readonly pool = new WorkerPool<DurationJob, number | null>(
    new URL('./audio-duration-worker.js', import.meta.url),
    {
      size: 2,
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB, maxYoungGenerationSizeMb: 16 },
      timeoutError: () => new AppError(503, 'busy', 'Reading the audio duration took too long.'),
    },
  );

  /** Seconds of audio, or null when the file cannot be read as `format` in time and memory. */
  async read(chunks: readonly Buffer[], bytes: number, format: AudioFormat): Promise<number | null> {
    try {
      const pieces = withoutMetadata(chunks, bytes, format);
      // One copy the thread shares (a Buffer would be copied again when posted, whole pool slabs with it).
      const size = pieces.reduce((sum, piece) => sum + piece.length, 0);
      const file = new SharedArrayBuffer(size);
      const view = Buffer.from(file);
      let at = 0;
      for (const piece of pieces) at += piece.copy(view, at);
      const deadline = performance.now() + DURATION_DEADLINE_MS;
      return await this.pool.run({ file, mimeType: AUDIO_MIME_TYPES[format] }, { deadline });
    } catch {
      return null;
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
