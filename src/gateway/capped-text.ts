/**
 * Texts as a log keeps them (GATELOG_LOG_MAX_BYTES): at most a limit, then a note of how much more there
 * was. The client's answer is never cut; the log's copy is, so that a long answer does not make a log
 * the size of the answer.
 */

/** The note after a text cut at the limit. */
const cutNote = (dropped: number) => `… [${dropped} more characters not logged]`;

/** A text joined from pieces, up to a limit; past it the rest is counted, not kept. */
export class Capped {
  private parts: string[] = [];
  private length = 0;
  private dropped = 0;
  constructor(
    private readonly limit: number,
    /** Told once, when the first piece does not fit (a stream's answer is then not kept whole). */
    private readonly onCut: () => void = () => undefined,
  ) {}

  add(piece: string): void {
    const room = this.limit - this.length;
    if (room >= piece.length) {
      this.parts.push(piece);
      this.length += piece.length;
    } else {
      if (this.dropped === 0) this.onCut();
      if (room > 0) this.parts.push(piece.slice(0, room));
      this.length = this.limit;
      this.dropped += piece.length - Math.max(room, 0);
    }
  }

  text(): string {
    const whole = this.parts.join('');
    return this.dropped === 0 ? whole : `${whole}${cutNote(this.dropped)}`;
  }
}

/** A whole text as a Capped one would keep it. */
export function capText(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}${cutNote(text.length - limit)}`;
}
