/**
 * A sketch as a summary merges them (sketch.ts holds the bins and their stored text): counts in an array
 * indexed by bin, so that adding a stored sketch is a parse of its text straight into the slots — no
 * object, no map — and adding two is adding arrays. The array holds only the window of bins seen so far
 * (a latency's bins span a few hundred of the 2,200 a second's range has), grown when a bin falls
 * outside: a summary holds one per cell, bucket and sketched field, and whole-range arrays made their
 * allocation and scanning most of its time. The zero bin is counted apart. Bins cover values from 1e-9
 * to about 1e9 (seconds: a nanosecond to thirty years); a value past either end counts in the last bin
 * on its side.
 */
import { type Bins, valueOfKey, ZERO } from './sketch.js';

const MIN_KEY = -1099;
const MAX_KEY = 1100;
/** Bins added on each side when the window grows, so that a few neighbours do not grow it again. */
const SLACK = 32;
const NONE = new Float64Array(0);

const clampKey = (key: number) => (key < MIN_KEY ? MIN_KEY : key > MAX_KEY ? MAX_KEY : key);

export class DenseSketch {
  /** The count of the zero bin. */
  private zero = 0;
  /** The key of counts[0]. */
  private lo = 0;
  private counts: Float64Array = NONE;

  /** Adds `n` to the bin of `key` (clamped to the range). */
  private add(key: number, n: number): void {
    const k = clampKey(key);
    if (k < this.lo || k >= this.lo + this.counts.length) this.grow(k, k);
    this.counts[k - this.lo] += n;
  }

  /** Widens the window to hold keys from `from` to `to`. */
  private grow(from: number, to: number): void {
    const old = this.counts;
    const oldLo = this.lo;
    // At least half again as wide, so that a sketch read bin by bin grows a few times, not once a bin.
    const slack = Math.max(SLACK, old.length >> 1);
    const lo = Math.max(MIN_KEY, Math.min(from, old.length > 0 ? oldLo : from) - slack);
    const hi = Math.min(MAX_KEY, Math.max(to, old.length > 0 ? oldLo + old.length - 1 : to) + slack);
    this.counts = new Float64Array(hi - lo + 1);
    this.counts.set(old, old.length > 0 ? oldLo - lo : 0);
    this.lo = lo;
  }

  /** Adds a stored sketch's text (encodeBins', PostgreSQL's jsonb text, or several end to end). */
  addText(text: string | null | undefined): void {
    if (!text) return;
    const length = text.length;
    let i = 0;
    while (i < length) {
      // A key: "z", or a signed integer in quotes.
      const quote = text.indexOf('"', i);
      if (quote < 0) return;
      let at = quote + 1;
      let zero = false;
      let key = 0;
      if (text.charCodeAt(at) === 122 /* z */) {
        zero = true;
        at += 1;
      } else {
        const negative = text.charCodeAt(at) === 45; /* - */
        if (negative) at += 1;
        for (let c = text.charCodeAt(at); c >= 48 && c <= 57; c = text.charCodeAt(++at)) key = key * 10 + (c - 48);
        if (negative) key = -key;
      }
      // Past the closing quote, the colon and any space: the count, maybe negative.
      at = text.indexOf(':', at) + 1;
      while (text.charCodeAt(at) === 32) at += 1;
      const negative = text.charCodeAt(at) === 45;
      if (negative) at += 1;
      let count = 0;
      for (let c = text.charCodeAt(at); c >= 48 && c <= 57; c = text.charCodeAt(++at)) count = count * 10 + (c - 48);
      if (zero) this.zero += negative ? -count : count;
      else this.add(key, negative ? -count : count);
      i = at;
    }
  }

  /** Adds bins (a map). */
  addBins(bins: Bins): void {
    for (const [bin, n] of bins) {
      if (bin === ZERO) this.zero += n;
      else this.add(Number(bin), n);
    }
  }

  addSketch(from: DenseSketch): void {
    this.zero += from.zero;
    this.addRange(from.lo, from.counts, 0, from.counts.length);
  }

  /** Adds `n` counts of `source` from `start` on, the first of them the bin of key `fromLo`. */
  private addRange(fromLo: number, source: Float64Array, start: number, n: number): void {
    if (n === 0) return;
    if (fromLo < this.lo || fromLo + n > this.lo + this.counts.length) this.grow(fromLo, fromLo + n - 1);
    const counts = this.counts;
    const offset = fromLo - this.lo - start;
    for (let i = start; i < start + n; i++) counts[offset + i] += source[i];
  }

  /**
   * The sketch packed for handing over without text (SQLite's aggregate answers it as a blob): doubles,
   * the zero bin's count, the first key, then the counts from it to the last bin with one.
   */
  pack(): Buffer {
    const counts = this.counts;
    let first = 0;
    let last = counts.length - 1;
    while (first <= last && counts[first] === 0) first++;
    while (last >= first && counts[last] === 0) last--;
    const packed = new Float64Array(2 + Math.max(0, last - first + 1));
    packed[0] = this.zero;
    packed[1] = this.lo + first;
    if (last >= first) packed.set(counts.subarray(first, last + 1), 2);
    return Buffer.from(packed.buffer);
  }

  /** Adds a sketch `pack` made (its bytes as a blob or a thread's message hands them over). */
  addPacked(bytes: Uint8Array): void {
    const n = bytes.byteLength / 8;
    // A view needs its start at a multiple of 8 bytes; a copy otherwise.
    const packed =
      bytes.byteOffset % 8 === 0
        ? new Float64Array(bytes.buffer, bytes.byteOffset, n)
        : new Float64Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + 8 * n));
    this.zero += packed[0];
    this.addRange(packed[1], packed, 2, n - 2);
  }

  /** Adds a group's sketch as a database answered it: text (one or several end to end) or packed. */
  addStored(stored: string | Uint8Array | null | undefined): void {
    if (typeof stored === 'string') this.addText(stored);
    else if (stored instanceof Uint8Array) this.addPacked(stored);
  }

  /** The bins with a count (0s left out), key → count: what encodeBins writes. */
  bins(): Bins {
    const bins: Bins = new Map();
    if (this.zero !== 0) bins.set(ZERO, this.zero);
    this.counts.forEach((n, i) => n !== 0 && bins.set(String(this.lo + i), n));
    return bins;
  }

  /** The sketch as stored text (encodeBins' spelling, bins at 0 left out); `{}` when it has none. */
  encode(): string {
    let text = this.zero === 0 ? '' : `"z":${this.zero}`;
    const counts = this.counts;
    for (let i = 0; i < counts.length; i++) {
      if (counts[i] !== 0) text += `${text === '' ? '' : ','}"${this.lo + i}":${counts[i]}`;
    }
    return `{${text}}`;
  }

  /**
   * The `fraction` quantile, interpolated as percentile_cont is — between the values at ranks
   * floor(f·(n−1)) and ceil(f·(n−1)) — from the bins' values. Each of the two is within RELATIVE_ERROR
   * of the value of that rank, and so is their weighted mean of the exact one; null for an empty sketch.
   * A bin below 0 (more taken away than added: never for stored rows) counts as empty.
   */
  quantile(fraction: number): number | null {
    const counts = this.counts;
    const zero = this.zero > 0 ? this.zero : 0;
    let total = zero;
    for (let i = 0; i < counts.length; i++) if (counts[i] > 0) total += counts[i];
    if (total <= 0) return null;
    const rank = fraction * (total - 1);
    const lower = Math.floor(rank);
    // The values at ranks `lower` and `lower + 1` (the last value when there is none), in one pass.
    let low: number | null = lower < zero ? 0 : null;
    let high: number | null = lower + 1 < zero ? 0 : null;
    let seen = zero;
    let last = 0;
    for (let i = 0; i < counts.length && high === null; i++) {
      if (counts[i] <= 0) continue;
      seen += counts[i];
      last = valueOfKey(this.lo + i);
      if (low === null && lower < seen) low = last;
      if (lower + 1 < seen) high = last;
    }
    low ??= last;
    high ??= last;
    return rank === lower ? low : low + (high - low) * (rank - lower);
  }
}
