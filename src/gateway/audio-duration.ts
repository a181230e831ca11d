/**
 * How many seconds of audio a file holds, read from the file by music-metadata (docs/api.md
 * "Speech-to-text proxy"): what a transcription costs when the provider does not say.
 *
 * The upload is held as the chunks it arrived in. music-metadata reads it through a tokenizer over those
 * chunks with random access, so that it jumps over what it does not need (a WAV file's samples, an Ogg
 * file's pages up to the last one) instead of reading it from a stream: 20 MB of WAV took 40–80 ms
 * through a stream, and no time this way.
 */
import { parseFromTokenizer } from 'music-metadata';
import { AbstractTokenizer, EndOfStreamError, type IRandomAccessFileInfo, type IReadChunkOptions } from 'strtok3';
import { type AudioFormat, AUDIO_MIME_TYPES } from './audio-format.js';

/** The longest the parser reads before letting the event loop run. */
const YIELD_EVERY_MS = 5;

/** A random-access tokenizer over a list of chunks, read in place (never joined). */
class ChunksTokenizer extends AbstractTokenizer {
  readonly fileInfo: IRandomAccessFileInfo;
  /** offsets[i]: where chunks[i] starts in the file. */
  private readonly offsets: number[] = [];
  private reads = 0;
  private lastYield = performance.now();

  constructor(
    private readonly chunks: readonly Buffer[],
    size: number,
    mimeType: string,
  ) {
    super();
    this.fileInfo = { size, mimeType };
    let at = 0;
    for (const chunk of chunks) {
      this.offsets.push(at);
      at += chunk.length;
    }
  }

  supportsRandomAccess(): boolean {
    return true;
  }

  setPosition(position: number): void {
    this.position = position;
  }

  async readBuffer(target: Uint8Array, options?: IReadChunkOptions): Promise<number> {
    const read = await this.peekBuffer(target, options);
    this.position = (options?.position ?? this.position) + read;
    return read;
  }

  async peekBuffer(target: Uint8Array, options?: IReadChunkOptions): Promise<number> {
    // Reads that resolve at once never let the event loop run: a parser scanning 25 MB of MP3 frames
    // would hold it for 100 ms. Every few milliseconds of reading, other work gets its turn.
    if (++this.reads % 64 === 0 && performance.now() - this.lastYield > YIELD_EVERY_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      this.lastYield = performance.now();
    }
    const { length, position, mayBeLess } = this.normalizeOptions(target, options);
    const size = this.fileInfo.size;
    const wanted = Math.max(0, Math.min(size - position, length));
    if (!mayBeLess && wanted < length) throw new EndOfStreamError();
    let copied = 0;
    let i = this.chunkAt(position);
    while (copied < wanted && i < this.chunks.length) {
      const chunk = this.chunks[i];
      const from = position + copied - this.offsets[i];
      const n = Math.min(chunk.length - from, wanted - copied);
      target.set(chunk.subarray(from, from + n), copied);
      copied += n;
      i++;
    }
    return copied;
  }

  /** The index of the chunk holding byte `position` (binary search). */
  private chunkAt(position: number): number {
    let lo = 0;
    let hi = this.offsets.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.offsets[mid] <= position) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}

/** Seconds of audio, or null when the file cannot be read as `format`. */
export async function audioDuration(
  chunks: readonly Buffer[],
  bytes: number,
  format: AudioFormat,
): Promise<number | null> {
  try {
    const tokenizer = new ChunksTokenizer(chunks, bytes, AUDIO_MIME_TYPES[format]);
    const metadata = await parseFromTokenizer(tokenizer, { duration: true, skipCovers: true });
    const seconds = metadata.format.duration;
    return typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0 ? seconds : null;
  } catch {
    return null;
  }
}
