/**
 * cl100k_base token counting for embedding inputs, in ordinary mode: special-token text such as
 * `<|endoftext|>` counts as plain text, as the provider counts it.
 *
 * Linear in the text. The tokenizer's byte-pair merging costs the square of a pre-tokenizer piece's
 * length (288,000 letters without a space took 28 s and then overflowed the stack), so a text is fed
 * to it in parts: cut where cl100k's pre-tokenizer cuts anyway (before a space or tab that follows a
 * non-space), which keeps the count exact, and — only inside a run of more than FORCED_CUT characters
 * with no such place (a long word, base64, a row of spaces) — every FORCED_CUT characters. There the
 * count may differ from the provider's by about a token per cut; no ordinary text has such runs.
 * Counting stops as soon as a limit is passed.
 */

export type Encode = (text: string, options: { disallowedSpecial: Set<string> }) => number[];

/** Longest run fed to the tokenizer whole when it holds no exact cut (a few µs of merging). */
export const FORCED_CUT = 128;
/** Parts are joined up to this many characters between exact cuts (fewer calls, same count). */
const PART = 4096;
const ORDINARY = { disallowedSpecial: new Set<string>() };

const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;
/** Whitespace as the pre-tokenizer's \s sees it (a superset is safe: it only forgoes cuts). */
function isSpace(c: number): boolean {
  if (c < 128) return c === 32 || (c >= 9 && c <= 13);
  return /\s/.test(String.fromCharCode(c));
}

/**
 * The number of tokens of `text`, or — once more than `limit` are counted — a number above `limit`
 * (then a lower bound of the count).
 */
export function countTextTokens(encode: Encode, text: string, limit = Number.POSITIVE_INFINITY): number {
  let count = 0;
  let start = 0;
  let runStart = 0;
  const take = (end: number) => {
    if (end > start) count += encode(text.slice(start, end), ORDINARY).length;
    start = end;
  };
  for (let i = 1; i < text.length && count <= limit; i++) {
    const c = text.charCodeAt(i);
    if ((c === 32 || c === 9) && !isSpace(text.charCodeAt(i - 1))) {
      runStart = i;
      if (i - start >= PART) take(i);
    } else if (i - runStart >= FORCED_CUT) {
      const cut = isLowSurrogate(c) ? i - 1 : i;
      take(cut);
      runStart = cut;
    }
  }
  if (count <= limit) take(text.length);
  return count;
}

export interface TextLimits {
  /** Tokens one text may have. */
  perText: number;
  /** Tokens all texts may have together. */
  total: number;
  /** Count every text in full (a log's local count); otherwise only what a limit needs. */
  countAll?: boolean;
}

export interface TextMeasure {
  /** The first text over `perText`, with a lower bound of its count. */
  overText: { index: number; tokens: number } | null;
  /** Set when all texts together pass `total` (a lower bound). */
  overTotal: number | null;
  /** The exact total when it was counted (countAll, or the texts' bytes exceeded `total`). */
  total: number | null;
}

/**
 * Checks texts against the limits. Every token covers at least one UTF-8 byte, so a text of at most
 * `perText` bytes cannot pass that limit, and texts of at most `total` bytes in all cannot pass the
 * total: only what could pass a limit is tokenized.
 */
export function measureTexts(encode: Encode, texts: readonly string[], limits: TextLimits): TextMeasure {
  let bytes = 0;
  for (const [index, text] of texts.entries()) {
    const size = Buffer.byteLength(text, 'utf8');
    bytes += size;
    if (size > limits.perText) {
      const tokens = countTextTokens(encode, text, limits.perText);
      if (tokens > limits.perText) return { overText: { index, tokens }, overTotal: null, total: null };
    }
  }
  if (!limits.countAll && bytes <= limits.total) return { overText: null, overTotal: null, total: null };
  let total = 0;
  for (const text of texts) {
    total += countTextTokens(encode, text, limits.total - total);
    if (total > limits.total) return { overText: null, overTotal: total, total: null };
  }
  return { overText: null, overTotal: null, total };
}
