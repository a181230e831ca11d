/**
 * Texts joined into pieces of about a given size, for a stream that writes many short lines (an export's
 * rows): one write per piece rather than per line, and never more than a piece and one line held at once
 * — a chunk's text is never built whole, so its memory does not grow with what each line holds.
 */

/** About 64 KiB of text a write: large enough that writes are few, small next to a chunk of logs. */
export const PIECE_CHARS = 64 * 1024;

export async function* inPieces(texts: AsyncIterable<string>, size = PIECE_CHARS): AsyncGenerator<string> {
  let parts: string[] = [];
  let length = 0;
  for await (const text of texts) {
    parts.push(text);
    length += text.length;
    if (length >= size) {
      yield parts.join('');
      parts = [];
      length = 0;
    }
  }
  if (length > 0) yield parts.join('');
}
