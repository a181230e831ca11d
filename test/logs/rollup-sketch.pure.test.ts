/**
 * The rollups' quantile sketch: every value read back within 1 % of the exact one — a single value, and
 * a percentile interpolated as percentile_cont is — and sketches that add and subtract exactly.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DenseSketch } from '../../src/logs/rollups/dense-sketch.js';
import {
  type Bins,
  binOf,
  decodeBins,
  encodeBins,
  mergeEncoded,
  RELATIVE_ERROR,
  valueOfBin,
} from '../../src/logs/rollups/sketch.js';

/** Adds `count` (negative: takes away) of the value to the bins, as a log's rollup delta does. */
function addValue(bins: Bins, value: number, count: number): void {
  const bin = binOf(value);
  bins.set(bin, (bins.get(bin) ?? 0) + count);
}

/** The bins as the summary reads them. */
function sketchOf(bins: Bins) {
  const sketch = new DenseSketch();
  sketch.addBins(bins);
  return sketch;
}

/** The bins with a count, as a map compares them. */
const nonZero = (bins: Bins) => new Map([...bins].filter(([, n]) => n !== 0));

/** percentile_cont: interpolated between the values at ranks floor and ceil of f·(n − 1). */
function percentileCont(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = fraction * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.min(low + 1, sorted.length - 1);
  return sorted[low] + (sorted[high] - sorted[low]) * (rank - low);
}

/** A seeded generator, so that a failure can be run again. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const within = (actual: number, exact: number, what: string) =>
  assert.ok(
    Math.abs(actual - exact) <= RELATIVE_ERROR * Math.abs(exact) + 1e-12,
    `${what}: ${actual} is not within ${RELATIVE_ERROR * 100} % of ${exact}`,
  );

describe('rollup sketch', () => {
  it('reads every value back within 1 %, from microseconds to hours, and 0 as 0', () => {
    const next = random(7);
    for (let i = 0; i < 20_000; i++) {
      const value = 10 ** (next() * 10 - 6); // 1 µs … 10,000 s
      within(valueOfBin(binOf(value)), value, `value ${value}`);
    }
    assert.equal(valueOfBin(binOf(0)), 0);
  });

  it('answers percentiles within 1 % of percentile_cont over skewed, tied and tiny sets', () => {
    const next = random(11);
    const sets: number[][] = [
      [0.42],
      [1, 100],
      [0, 0, 3.5],
      Array.from({ length: 1000 }, () => 0.2 + next() * 0.3),
      Array.from({ length: 5000 }, () => Math.exp(next() * 8 - 3)), // long tail
      Array.from({ length: 300 }, (_, i) => (i % 3 === 0 ? 0 : 1.25)),
    ];
    for (const [k, values] of sets.entries()) {
      const bins: Bins = new Map();
      for (const v of values) addValue(bins, v, 1);
      const sketch = sketchOf(bins);
      assert.equal(
        [...sketch.bins().values()].reduce((a, b) => a + b, 0),
        values.length,
      );
      for (const f of [0, 0.5, 0.9, 0.95, 0.99, 1]) {
        within(sketch.quantile(f)!, percentileCont(values, f), `set ${k} p${f * 100}`);
      }
    }
    assert.equal(new DenseSketch().quantile(0.5), null);
  });

  it('adds and takes away exactly, whatever the order, and merges stored text the same', () => {
    const next = random(3);
    const values = Array.from({ length: 500 }, () => next() * 20);
    const all: Bins = new Map();
    for (const v of values) addValue(all, v, 1);
    const firstHalf: Bins = new Map();
    const secondHalf: Bins = new Map();
    values.forEach((v, i) => addValue(i < 250 ? firstHalf : secondHalf, v, 1));
    const merged = decodeBins(encodeBins(firstHalf), decodeBins(encodeBins(secondHalf)));
    assert.deepEqual(decodeBins(encodeBins(merged)), decodeBins(encodeBins(all)));
    assert.deepEqual(
      decodeBins(mergeEncoded(encodeBins(firstHalf), encodeBins(secondHalf))),
      decodeBins(encodeBins(all)),
    );
    // Taking the second half away leaves the first; bins at 0 are not stored.
    const removed: Bins = new Map();
    for (const v of values.slice(250)) addValue(removed, v, -1);
    const left = decodeBins(mergeEncoded(encodeBins(all), encodeBins(removed)));
    assert.deepEqual(left, decodeBins(encodeBins(firstHalf)));
    assert.ok([...left.values()].every((n) => n > 0));
    assert.equal(mergeEncoded(null, null), '{}');
  });

  it('reads stored text as the bins say, in either database’s spelling and end to end', () => {
    const next = random(5);
    const bins: Bins = new Map();
    for (let i = 0; i < 2000; i++) addValue(bins, i % 10 === 0 ? 0 : Math.exp(next() * 12 - 6), 1);
    addValue(bins, 3.3, -1); // a count taken away
    const text = encodeBins(bins);
    // PostgreSQL's jsonb text: a space after each colon and comma, keys in its own order.
    const jsonb = `{${[...decodeBins(text)]
      .reverse()
      .map(([k, n]) => `"${k}": ${n}`)
      .join(', ')}}`;
    for (const spelling of [text, jsonb]) {
      const sketch = new DenseSketch();
      sketch.addText(spelling);
      assert.deepEqual(sketch.bins(), nonZero(bins));
    }
    // Texts end to end (a group's sketches as PostgreSQL's string_agg gives them) read as their sum.
    const twice = new DenseSketch();
    twice.addText(`${text}${jsonb}{}`);
    assert.deepEqual(twice.bins(), new Map([...nonZero(bins)].map(([k, n]) => [k, 2 * n])));
  });

  it('grows its window either way, clamps past the ends, and merges sketches of other windows', () => {
    const keys = [40, -300, 41, 900, -1000, 5000, -5000, 0, 39];
    const sketch = new DenseSketch();
    for (const key of keys) sketch.addText(`{"${key}":1}`);
    sketch.addText('{"z":2}');
    const clamped = (k: number) => String(Math.min(1100, Math.max(-1099, k)));
    const want: Bins = new Map([['z', 2]]);
    for (const k of keys) want.set(clamped(k), (want.get(clamped(k)) ?? 0) + 1);
    assert.deepEqual(sketch.bins(), want);
    // Merged into sketches whose windows lie below, above and around it, and into an empty one.
    for (const start of ['{"-1050":1}', '{"1099":1}', '{"-1099":1,"1100":1}', '{}']) {
      const into = new DenseSketch();
      into.addText(start);
      into.addSketch(sketch);
      const expected = new Map(want);
      for (const [k, n] of decodeBins(start)) expected.set(k, (expected.get(k) ?? 0) + n);
      assert.deepEqual(into.bins(), expected, start);
    }
  });

  it('answers quantiles as percentile_cont over the bins’ values, zero bin first', () => {
    const next = random(21);
    const bins: Bins = new Map();
    for (let i = 0; i < 777; i++) addValue(bins, i % 13 === 0 ? 0 : Math.exp(next() * 10 - 5), 1);
    const values = [...bins].flatMap(([bin, n]) => Array.from({ length: n }, () => valueOfBin(bin)));
    const sketch = sketchOf(bins);
    for (const f of [0, 0.01, 0.5, 0.9, 0.95, 0.99, 1]) {
      const exact = percentileCont(values, f);
      assert.ok(Math.abs(sketch.quantile(f)! - exact) <= 1e-12 * Math.max(1, exact), `p${f * 100}`);
    }
  });

  it('encodes back to the stored spelling: the same bins, none at 0, and {} for none', () => {
    const next = random(9);
    const bins: Bins = new Map();
    for (let i = 0; i < 3000; i++) addValue(bins, i % 7 === 0 ? 0 : Math.exp(next() * 16 - 8), 1);
    addValue(bins, 0.5, 5);
    addValue(bins, 0.5, -5); // back to 0: not stored
    const text = sketchOf(bins).encode();
    assert.deepEqual(decodeBins(text), nonZero(bins));
    const back = new DenseSketch();
    back.addText(text);
    assert.deepEqual(back.bins(), nonZero(bins));
    assert.equal(new DenseSketch().encode(), '{}');
  });

  it('packs into a blob and back: the same bins, from any byte offset, nothing for an empty sketch', () => {
    const next = random(13);
    const bins: Bins = new Map();
    for (let i = 0; i < 500; i++) addValue(bins, i % 9 === 0 ? 0 : Math.exp(next() * 6 - 3), 1);
    const packed = sketchOf(bins).pack();
    const back = new DenseSketch();
    back.addPacked(packed);
    assert.deepEqual(back.bins(), nonZero(bins));
    // As a thread's message may hand it over: bytes at an offset that is no multiple of 8.
    const shifted = new Uint8Array(packed.byteLength + 3);
    shifted.set(packed, 3);
    const fromShifted = new DenseSketch();
    fromShifted.addStored(shifted.subarray(3));
    assert.deepEqual(fromShifted.bins(), nonZero(bins));
    const empty = new DenseSketch();
    empty.addPacked(new DenseSketch().pack());
    assert.deepEqual(empty.bins(), new Map());
    assert.equal(empty.quantile(0.5), null);
  });
});
