/**
 * Reading an embeddings answer that is passed on unchanged. Its base64 vectors are nearly all of its
 * bytes, yet the log needs only the small fields around them (usage, model, count, dimensions): decoding
 * and parsing the vectors as well was about a third of the bytes a proxied call allocated (an allocation
 * profile at full load, bench/README.md). So the vectors are cut out of the buffer first, their lengths
 * kept, and only the rest is parsed.
 */

const EMBEDDING_KEY = Buffer.from('"embedding"');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const EQUALS = 0x3d;

const isSpace = (byte: number) => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;

/** Bytes a base64 text of `chars` characters, `padding` of them '=', decodes to. */
export const base64Bytes = (chars: number, padding: number) => Math.floor((chars * 3) / 4) - padding;

/** An answer parsed without its vectors: `vectorBytes[i]` is what the i-th base64 vector decodes to. */
export interface SlimAnswer {
  parsed: unknown;
  vectorBytes: number[];
}

/**
 * The answer parsed with each base64 `"embedding"` string replaced by "", or null when it is not that
 * plain shape (float vectors, escapes, not JSON): the caller then parses it whole.
 */
export function parseWithoutVectors(body: Buffer): SlimAnswer | null {
  const parts: string[] = [];
  const vectorBytes: number[] = [];
  let copiedTo = 0;
  let from = 0;
  for (;;) {
    const at = body.indexOf(EMBEDDING_KEY, from);
    if (at < 0) break;
    from = at + EMBEDDING_KEY.length;
    let i = from;
    while (i < body.length && isSpace(body[i])) i++;
    // "embedding" as a value ("object": "embedding") is not followed by a colon.
    if (body[i] !== COLON) continue;
    i++;
    while (i < body.length && isSpace(body[i])) i++;
    if (body[i] !== QUOTE) return null;
    const end = body.indexOf(QUOTE, i + 1);
    if (end < 0) return null;
    const backslash = body.indexOf(BACKSLASH, i + 1);
    if (backslash >= 0 && backslash < end) return null;
    const padding = body[end - 1] === EQUALS ? (body[end - 2] === EQUALS ? 2 : 1) : 0;
    vectorBytes.push(base64Bytes(end - i - 1, padding));
    parts.push(body.toString('utf8', copiedTo, i + 1));
    copiedTo = end;
    from = end + 1;
  }
  parts.push(body.toString('utf8', copiedTo));
  let parsed: unknown;
  try {
    parsed = JSON.parse(parts.join(''));
  } catch {
    return null;
  }
  // Every vector cut out must be one of the answer's own (not a look-alike inside some other string).
  const data = (parsed as { data?: unknown } | null)?.data;
  const cut = Array.isArray(data)
    ? data.filter((item) => (item as { embedding?: unknown } | null)?.embedding === '').length
    : 0;
  return cut === vectorBytes.length ? { parsed, vectorBytes } : null;
}
