/**
 * A mergeable quantile sketch of non-negative values (latency, time to first token) with a guaranteed
 * relative error: DDSketch's logarithmic bins (Masson, Rim, Lee: "DDSketch: a fast and fully-mergeable
 * quantile sketch with relative-error guarantees", VLDB 2019). A value v > 0 falls in bin
 * k = ceil(ln v / ln γ), γ = (1 + α) / (1 − α); the bin's representative 2γ^k / (γ + 1) is within α of
 * every value of the bin. Values too small for a bin (0) are counted apart.
 *
 * Bins hold counts only, so sketches add and subtract exactly: a rollup row's sketch is the sum of its
 * logs' bins whatever order they were written, merged or deleted in — the same on both databases, which
 * merge the stored text in SQL (SQLite: a registered function; PostgreSQL: gatelog_sketch_merge).
 *
 * Stored as JSON text, bin → count, the zero count under "z": `{"z":1,"-112":3,"35":2}`.
 */

/** The guaranteed relative error of a value read from a sketch. */
export const RELATIVE_ERROR = 0.01;
const GAMMA = (1 + RELATIVE_ERROR) / (1 - RELATIVE_ERROR);
const LN_GAMMA = Math.log(GAMMA);
/** Below this a value counts as zero (a nanosecond, for times in seconds). */
const MIN_VALUE = 1e-9;
const ZERO = 'z';

/** bin → count; the zero bin is "z". */
export type Bins = Map<string, number>;

/** The bin a value falls in. */
export const binOf = (value: number): string =>
  value < MIN_VALUE ? ZERO : String(Math.ceil(Math.log(value) / LN_GAMMA));

/** The value a bin's key stands for (k > 0 above 1, below it negative): within RELATIVE_ERROR of its values. */
const valueOfKey = (key: number): number => (2 * GAMMA ** key) / (GAMMA + 1);

/** The value a bin stands for: within RELATIVE_ERROR of every value in it. */
export const valueOfBin = (bin: string): number => (bin === ZERO ? 0 : valueOfKey(Number(bin)));

export function encodeBins(bins: Bins): string {
  let text = '';
  for (const [bin, n] of bins) if (n !== 0) text += `${text === '' ? '' : ','}"${bin}":${n}`;
  return `{${text}}`;
}

export function decodeBins(text: string | null | undefined, into: Bins = new Map()): Bins {
  if (!text) return into;
  const parsed = JSON.parse(text) as Record<string, number>;
  for (const bin of Object.keys(parsed)) into.set(bin, (into.get(bin) ?? 0) + parsed[bin]);
  return into;
}

/** Two stored sketches as one (the SQL functions' work: either may be null); bins at 0 are left out. */
export function mergeEncoded(a: string | null, b: string | null): string {
  return encodeBins(decodeBins(b, decodeBins(a)));
}

/**
 * Sketches as a summary merges them: one slot per bin in an array (the zero bin first), so that adding a
 * stored sketch is a parse of its text straight into the slots — no object, no map — and adding two is
 * adding arrays. Bins cover values from 1e-9 to about 1e9 (seconds: a nanosecond to thirty years); a
 * value past either end counts in the last slot on its side.
 */
const DENSE_OFFSET = 1100;
export const DENSE_SIZE = 2 * DENSE_OFFSET + 1;
export type Dense = Float64Array;
export const newDense = (): Dense => new Float64Array(DENSE_SIZE);

const slotOfKey = (key: number) => Math.min(DENSE_SIZE - 1, Math.max(1, key + DENSE_OFFSET));

/** Adds a stored sketch's text (encodeBins' or PostgreSQL's jsonb text) into `dense`. */
export function addEncodedToDense(text: string | null | undefined, dense: Dense): void {
  if (!text) return;
  const length = text.length;
  let i = 0;
  while (i < length) {
    // A key: "z", or a signed integer in quotes.
    const quote = text.indexOf('"', i);
    if (quote < 0) return;
    let at = quote + 1;
    let slot: number;
    if (text.charCodeAt(at) === 122 /* z */) {
      slot = 0;
      at += 1;
    } else {
      const negative = text.charCodeAt(at) === 45; /* - */
      if (negative) at += 1;
      let key = 0;
      for (let c = text.charCodeAt(at); c >= 48 && c <= 57; c = text.charCodeAt(++at)) key = key * 10 + (c - 48);
      slot = slotOfKey(negative ? -key : key);
    }
    // Past the closing quote, the colon and any space: the count, maybe negative.
    at = text.indexOf(':', at) + 1;
    while (text.charCodeAt(at) === 32) at += 1;
    const negative = text.charCodeAt(at) === 45;
    if (negative) at += 1;
    let count = 0;
    for (let c = text.charCodeAt(at); c >= 48 && c <= 57; c = text.charCodeAt(++at)) count = count * 10 + (c - 48);
    dense[slot] += negative ? -count : count;
    i = at;
  }
}

/** Adds bins (a map) into `dense`. */
export function addBinsToDense(bins: Bins, dense: Dense): void {
  for (const [bin, n] of bins) dense[bin === ZERO ? 0 : slotOfKey(Number(bin))] += n;
}

export function addDense(into: Dense, from: Dense): void {
  for (let i = 0; i < DENSE_SIZE; i++) into[i] += from[i];
}

/**
 * A dense sketch as stored text (encodeBins' spelling, slots at 0 left out): what a group's merged
 * sketch is handed over as — built once per group, not per row (gatelog_sketch_sum).
 */
export function encodeDense(dense: Dense): string {
  let text = dense[0] === 0 ? '' : `"z":${dense[0]}`;
  for (let i = 1; i < DENSE_SIZE; i++) {
    if (dense[i] !== 0) text += `${text === '' ? '' : ','}"${i - DENSE_OFFSET}":${dense[i]}`;
  }
  return `{${text}}`;
}

/**
 * The `fraction` quantile, interpolated as percentile_cont is — between the values at ranks
 * floor(f·(n−1)) and ceil(f·(n−1)) — from the bins' values. Each of the two is within RELATIVE_ERROR of
 * the value of that rank, and so is their weighted mean of the exact one; null for an empty sketch.
 * Slots below 0 (more taken away than added: never for stored rows) count as empty.
 */
export function denseQuantile(dense: Dense, fraction: number): number | null {
  let total = 0;
  for (let i = 0; i < DENSE_SIZE; i++) if (dense[i] > 0) total += dense[i];
  if (total <= 0) return null;
  const rank = fraction * (total - 1);
  const lower = Math.floor(rank);
  const at = (r: number) => {
    let seen = 0;
    let last = 0;
    for (let i = 0; i < DENSE_SIZE; i++) {
      if (dense[i] <= 0) continue;
      seen += dense[i];
      last = i;
      if (r < seen) break;
    }
    return last === 0 ? 0 : valueOfKey(last - DENSE_OFFSET);
  };
  const low = at(lower);
  return rank === lower ? low : low + (at(lower + 1) - low) * (rank - lower);
}
