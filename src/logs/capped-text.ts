/**
 * Texts as a log keeps them (GATELOG_LOG_MAX_BYTES): at most a limit, then a note of how much more there
 * was. The client's answer is never cut; the log's copy is, so that a long answer does not make a log
 * the size of the answer.
 */

const NOTE_HEAD = '… [';
const NOTE_TAIL = ' more characters not logged]';

/** The note after a text cut at the limit. */
const cutNote = (dropped: number) => `${NOTE_HEAD}${dropped}${NOTE_TAIL}`;

/** The note after a list (or an object) whose last entries were left out. */
export const itemsNote = (dropped: number) => `${NOTE_HEAD}${dropped} more items not logged]`;

/** The longest note a cut text can get (a count of up to 16 digits). */
export const MAX_NOTE_CHARS = cutNote(10 ** 15).length;

/**
 * A text's own characters and what its note says was left out (0 without a note): a text cut once (a
 * stream's assembled answer) and cut again (the log's budget) counts both cuts in its one note.
 */
export function splitNote(text: string): { body: string; dropped: number } {
  if (!text.endsWith(NOTE_TAIL)) return { body: text, dropped: 0 };
  const head = text.lastIndexOf(NOTE_HEAD);
  const digits = head < 0 ? '' : text.slice(head + NOTE_HEAD.length, text.length - NOTE_TAIL.length);
  if (!/^\d{1,16}$/.test(digits)) return { body: text, dropped: 0 };
  return { body: text.slice(0, head), dropped: Number(digits) };
}

/** The first `keep` characters of a text, then the note of the rest (and of what a note already said). */
export function cutText(text: string, keep: number): string {
  const { body, dropped } = splitNote(text);
  let end = Math.max(0, Math.min(keep, body.length));
  // Never half of a surrogate pair.
  if (end > 0 && end < body.length && isHighSurrogate(body.charCodeAt(end - 1))) end -= 1;
  if (end === body.length && dropped === 0) return text;
  return `${body.slice(0, end)}${cutNote(body.length - end + dropped)}`;
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

/**
 * What a call's texts may keep together: the assembler of a stream holds at most this much of its
 * answer, however many choices, blocks and tool calls it has (each of them a Capped drawing from it),
 * besides the first TEXT_RESERVE characters of each: the texts that come after the allowance is spent
 * (the fortieth choice, a tool call's arguments after its long name) still show how they begin.
 */
export class Allowance {
  constructor(public left: number) {}
}

/** What each text of an answer may keep, even once its answer's allowance is spent. */
export const TEXT_RESERVE = 4096;

/** A text joined from pieces, up to a limit; past it the rest is counted, not kept. */
export class Capped {
  private parts: string[] = [];
  private length = 0;
  private dropped = 0;
  constructor(
    private readonly limit: number,
    /** Told once, when the first piece does not fit (a stream's answer is then not kept whole). */
    private readonly onCut: () => void = () => undefined,
    /** Shared with the other texts of the same answer, when given. */
    private readonly shared: Allowance | null = null,
  ) {}

  add(piece: string): void {
    // Once cut, a text keeps nothing more: what it holds stays one piece of the answer, then its note.
    if (this.dropped > 0) {
      this.dropped += piece.length;
      return;
    }
    const shared =
      this.shared === null ? Number.POSITIVE_INFINITY : Math.max(this.shared.left, TEXT_RESERVE - this.length);
    const room = Math.min(this.limit - this.length, shared);
    if (room >= piece.length) {
      this.keep(piece);
      return;
    }
    this.onCut();
    if (room > 0) this.keep(piece.slice(0, room));
    this.dropped += piece.length - Math.max(room, 0);
  }

  private keep(piece: string): void {
    this.parts.push(piece);
    this.length += piece.length;
    if (this.shared !== null) this.shared.left -= piece.length;
  }

  text(): string {
    const whole = this.parts.join('');
    return this.dropped === 0 ? whole : `${whole}${cutNote(this.dropped)}`;
  }
}

/** A whole text as a Capped one would keep it. */
export function capText(text: string, limit: number): string {
  return text.length <= limit ? text : cutText(text, limit);
}

/**
 * The texts of one answer, capped together (one Allowance): a stream's assembler makes each of its
 * texts here, and learns whether any was cut (the answer it rebuilt is then not whole).
 */
export class AnswerTexts {
  cut = false;
  private readonly allowance: Allowance;
  private readonly markCut = () => {
    this.cut = true;
  };

  constructor(private readonly maxChars: number) {
    this.allowance = new Allowance(maxChars);
  }

  text(): Capped {
    return new Capped(this.maxChars, this.markCut, this.allowance);
  }
}
