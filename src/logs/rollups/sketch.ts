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
export const ZERO = 'z';

/** bin → count; the zero bin is "z". */
export type Bins = Map<string, number>;

/** The bin a value falls in. */
export const binOf = (value: number): string =>
  value < MIN_VALUE ? ZERO : String(Math.ceil(Math.log(value) / LN_GAMMA));

/** The value a bin's key stands for (k > 0 above 1, below it negative): within RELATIVE_ERROR of its values. */
export const valueOfKey = (key: number): number => (2 * GAMMA ** key) / (GAMMA + 1);

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
