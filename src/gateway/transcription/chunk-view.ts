/**
 * A file held as the chunks it arrived in (never joined), read at any offset: a few header bytes, or a
 * range of the file as views into its chunks.
 */
export class ChunkView {
  /** offsets[i]: where chunks[i] starts in the file. */
  private readonly offsets: number[] = [];

  constructor(
    readonly chunks: readonly Buffer[],
    readonly size: number,
  ) {
    let at = 0;
    for (const chunk of chunks) {
      this.offsets.push(at);
      at += chunk.length;
    }
  }

  /** `length` bytes from `position` (copied only when they span chunks), or null past the end. */
  bytes(position: number, length: number): Buffer | null {
    if (position < 0 || position + length > this.size) return null;
    const i = this.chunkAt(position);
    const from = position - this.offsets[i];
    if (from + length <= this.chunks[i].length) return this.chunks[i].subarray(from, from + length);
    return Buffer.concat(this.range(position, position + length), length);
  }

  /** The bytes from `from` to `to` (the end at most), as views into the chunks. */
  range(from: number, to = this.size): Buffer[] {
    const end = Math.min(to, this.size);
    const pieces: Buffer[] = [];
    for (let i = this.chunkAt(from); i < this.chunks.length && this.offsets[i] < end; i++) {
      const start = Math.max(0, from - this.offsets[i]);
      const stop = Math.min(this.chunks[i].length, end - this.offsets[i]);
      if (stop > start) pieces.push(this.chunks[i].subarray(start, stop));
    }
    return pieces;
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
