/**
 * A JSON value cut down to a size (UTF-8 bytes of its JSON text), keeping its shape: what fits is kept
 * as it is (the same value: nothing is copied); past the size the room is shared fairly — small parts are
 * kept whole, the large ones get equal shares, recursively — so that forty long choices each keep their
 * beginning rather than the first one keeping everything. A cut text ends with the note of how much more
 * there was (capped-text.ts); a list or an object with too many entries to give each a little keeps its
 * first ones, then the note of how many more there were (an extra list item, or the key "…").
 *
 * Sizes are read only as far as needed (a part larger than its room is not read to its end), so a 50 MB
 * answer is neither serialized nor read whole to keep 1 MB of it.
 */
import { cutText, itemsNote, MAX_NOTE_CHARS } from '../capped-text.js';

/** The least a part is given when it cannot be kept whole: its note and the beginning of its text. */
export const FLOOR = MAX_NOTE_CHARS + 24;
/** The key under which an object's note says how many of its keys were left out. */
export const MORE_KEYS = '…';
/** Deeper than this, a part is replaced by its note (JSON.stringify itself would run out of stack). */
const MAX_DEPTH = 200;

type Json = Record<string, unknown>;

/** Text with nothing to escape or encode on more than one byte: its JSON is its length and two quotes. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** The UTF-8 bytes of a string's JSON text, or a number past `limit` once it is sure to be past it. */
export function stringSize(text: string, limit = Number.POSITIVE_INFINITY): number {
  // A character takes one byte at least: a text longer than its room is not read.
  if (text.length + 2 > limit) return text.length + 2;
  if (PLAIN.test(text)) return text.length + 2;
  let size = 2;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) size += c === 0x22 || c === 0x5c || (c >= 0x08 && c <= 0x0d && c !== 0x0b) ? 2 : c < 0x20 ? 6 : 1;
    else if (c < 0x800) size += 2;
    else if (c >= 0xd800 && c <= 0xdbff && isLow(text.charCodeAt(i + 1))) {
      size += 4;
      i++;
    } else if (c >= 0xd800 && c <= 0xdfff)
      size += 6; // a lone surrogate is escaped
    else size += 3;
  }
  return size;
}

const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** Values JSON.stringify leaves out of an object (and writes as null in a list). */
const omitted = (v: unknown) => v === undefined || typeof v === 'function' || typeof v === 'symbol';

/** The size of a value's JSON text, read only until it passes `limit` (then some number past it). */
export function jsonSize(value: unknown, limit = Number.POSITIVE_INFINITY): number {
  return new Fitter().size(value, limit, 0);
}

/** A value whose JSON text takes at most about `budget` bytes (the same value when it already does). */
export function fitJson(value: unknown, budget: number): unknown {
  return new Fitter().fit(value, budget, 0);
}

/**
 * One fitting. A list or an object is measured again at each level the room is shared out at: what is
 * known of each is kept — its size when read whole, else how far past its limit it was read (negated) —
 * so that its parts are not read again.
 */
class Fitter {
  private readonly known = new Map<object, number>();

  size(value: unknown, limit: number, depth: number): number {
    if (value === null || omitted(value)) return 4;
    switch (typeof value) {
      case 'string':
        return stringSize(value, limit);
      case 'number':
        return Number.isFinite(value) ? String(value).length : 4;
      case 'boolean':
        return value ? 4 : 5;
      case 'object':
        break;
      default:
        return 4;
    }
    if (depth > MAX_DEPTH) return limit + 1;
    const known = this.known.get(value);
    if (known !== undefined && (known >= 0 || -known > limit)) return Math.abs(known);
    let size = 2;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length && size <= limit; i++) {
        size += (i > 0 ? 1 : 0) + this.size(value[i], limit - size, depth + 1);
      }
    } else {
      const object = value as Json;
      let first = true;
      for (const key of Object.keys(object)) {
        if (size > limit) break;
        const v = object[key];
        if (omitted(v)) continue;
        size += (first ? 0 : 1) + stringSize(key) + 1 + this.size(v, limit - size, depth + 1);
        first = false;
      }
    }
    this.known.set(value, size <= limit ? size : -size);
    return size;
  }

  fit(value: unknown, budget: number, depth: number): unknown {
    const room = Math.max(budget, FLOOR);
    if (this.size(value, room, depth) <= room) return value;
    if (typeof value === 'string') return fitString(value, room);
    if (value === null || typeof value !== 'object') return value;
    if (depth > MAX_DEPTH) return itemsNote(1);
    if (Array.isArray(value)) {
      const { values, dropped } = this.fitEntries(
        value.length,
        () => null,
        (i) => value[i],
        room,
        depth,
      );
      if (dropped > 0) values.push(itemsNote(dropped));
      return values;
    }
    const object = value as Json;
    const keys = Object.keys(object).filter((key) => !omitted(object[key]));
    const { values, dropped } = this.fitEntries(
      keys.length,
      (i) => keys[i],
      (i) => object[keys[i]],
      room,
      depth,
    );
    const fitted: Json = {};
    values.forEach((v, i) => (fitted[keys[i]] = v));
    if (dropped > 0) fitted[MORE_KEYS] = itemsNote(dropped);
    return fitted;
  }

  /**
   * The entries of a list or an object (`count` of them, read by position) fitted into `budget`: all
   * of them when each can get at least FLOOR (or its whole size, when smaller); else the first ones that
   * can, and a note of how many more there were. The room is shared fairly among those kept.
   */
  private fitEntries(
    count: number,
    keyAt: (i: number) => string | null,
    valueAt: (i: number) => unknown,
    budget: number,
    depth: number,
  ): { values: unknown[]; dropped: number } {
    const noteSize = 1 + MAX_NOTE_CHARS + 2 + (keyAt(0) === null ? 0 : stringSize(MORE_KEYS) + 1);
    const sizes: number[] = [];
    const overheads: number[] = [];
    // The least the first i entries need; the most that can be kept with a note after them.
    let least = 2;
    let withNote = 0;
    for (let i = 0; i < count && least <= budget; i++) {
      const key = keyAt(i);
      overheads.push((i > 0 ? 1 : 0) + (key === null ? 0 : stringSize(key) + 1));
      sizes.push(this.size(valueAt(i), budget, depth + 1));
      least += overheads[i] + Math.min(sizes[i], FLOOR);
      if (least + noteSize <= budget) withNote = i + 1;
    }
    const kept = sizes.length === count && least <= budget ? count : withNote;
    let room = budget - 2 - (kept < count ? noteSize : 0);
    for (let i = 0; i < kept; i++) room -= overheads[i];
    // Smallest first: each keeps its whole size while that is within an equal share of what is left.
    const order = Array.from({ length: kept }, (_, i) => i).sort((a, b) => sizes[a] - sizes[b]);
    const values: unknown[] = new Array(kept);
    let left = kept;
    for (const i of order) {
      const share = Math.floor(room / left);
      values[i] = sizes[i] <= share ? valueAt(i) : this.fit(valueAt(i), share, depth + 1);
      room -= Math.min(sizes[i], share);
      left--;
    }
    return { values, dropped: count - kept };
  }
}

/** A text cut so that its JSON (its note included) takes about `budget` bytes. */
function fitString(text: string, budget: number): string {
  const target = budget - 2 - MAX_NOTE_CHARS;
  let keep = Math.max(0, Math.min(text.length, target));
  // Characters that take more than a byte (or an escape): fewer of them, in proportion, until it fits.
  for (let tries = 0; tries < 8 && keep > 0; tries++) {
    const size = stringSize(text.slice(0, keep)) - 2;
    if (size <= target) break;
    keep = Math.floor((keep * target) / size) - 1;
  }
  return cutText(text, Math.max(0, keep));
}
