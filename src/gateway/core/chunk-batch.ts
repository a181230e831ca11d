/**
 * What one chunk from the provider completed, gathered to be written to the client in one piece when the
 * chunk has been read (stream-pipeline.ts): events that arrived together leave together (one socket
 * write, not one per event), and none waits for a later chunk.
 *
 * When the chunk began and ended between events — on a line's end, so that no character is split
 * across chunks — and every event in it was passed on as it came, the batch is the chunk itself: its
 * bytes go out as they are, not decoded text encoded again.
 */
export class ChunkBatch {
  private text = '';
  /** The last chunk ended between events, on a line's end. */
  private atBoundary = true;
  /** The chunk being read began so. */
  private began = true;
  /** An event of the chunk was dropped, or text not from it written. */
  private altered = false;

  /** A provider's chunk is about to be read. */
  begin(): void {
    this.began = this.atBoundary;
    this.altered = false;
  }

  /** Text as the provider sent it (an event passed on, a comment). */
  pass(text: string): void {
    this.text += text;
  }

  /** Text of gatelog's own (an event the reader wrote, an error event): the chunk is not the batch. */
  write(text: string): void {
    this.altered = true;
    this.text += text;
  }

  /** An event the reader did not pass on. */
  drop(): void {
    this.altered = true;
  }

  /** The chunk has been read; `betweenEvents`: no event is half-read. */
  end(chunk: Buffer, betweenEvents: boolean): void {
    this.atBoundary = betweenEvents && chunk[chunk.length - 1] === 0x0a;
  }

  /** What was gathered, taken: the chunk's own bytes when they are the batch, else text; null if nothing. */
  take(chunk: Buffer | null): string | Buffer | null {
    if (this.text === '') return null;
    const text = this.text;
    this.text = '';
    return chunk !== null && this.began && this.atBoundary && !this.altered ? chunk : text;
  }
}
