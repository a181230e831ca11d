import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import {
  decodeCells,
  percentileOfSorted,
  registerCellsAggregate,
} from '../../src/db/sqlite-aggregates/cells-aggregate.js';
import { percentileAcross } from '../../src/logs/summary/sqlite-summary.js';

/** A seeded generator, so that a failure repeats. */
function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const FRACTIONS = [0, 0.01, 0.5, 0.9, 0.95, 0.99, 1];

describe('summary percentiles on SQLite', () => {
  it('finds each percentile among a slice’s sorted values as it would in all of them sorted together', () => {
    const next = random(7);
    for (let round = 0; round < 300; round += 1) {
      // Few distinct values half the time: ties across the slices.
      const distinct = next() < 0.5 ? 5 : 1e6;
      const slices = Array.from({ length: 1 + Math.floor(next() * 4) }, () =>
        Float64Array.from({ length: Math.floor(next() * 40) }, () => Math.floor(next() * distinct) / 7).sort(),
      );
      const all = Float64Array.from(slices.flatMap((s) => [...s])).sort();
      for (const f of FRACTIONS) {
        assert.equal(percentileAcross(slices, f), percentileOfSorted(all, f), `round ${round}, fraction ${f}`);
      }
    }
  });

  it('answers what percentile_cont answers, per bucket and series and over all, from one read', () => {
    const db = new SQLite(':memory:');
    registerCellsAggregate(db);
    db.exec('create table t (b integer, g integer, sc integer, x real, y real)');
    const insert = db.prepare('insert into t values (?, ?, ?, ?, ?)');
    const next = random(11);
    for (let i = 0; i < 5000; i += 1) {
      insert.run(
        Math.floor(next() * 6),
        Math.floor(next() * 3) - 1,
        next() < 0.1 ? 500 : 200,
        next() < 0.2 ? null : next() * 10,
        Math.floor(next() * 20),
      );
    }
    // Series by the group's value: 0 → 0, 1 → 1, and −1 in neither ("other", as a value not kept is).
    const spec = JSON.stringify({ fractions: [[0.5, 0.95], [0.99]], groups: 1, series: [['0'], ['1']] });
    const blob = (
      db.prepare('select gl_summary_cells(gl_summary_spec(?), b, sc, g, x, y) c from t').get(spec) as { c: Buffer }
    ).c;
    const { result, sorted } = decodeCells(blob);
    const expect = (where: string, args: unknown[]) =>
      db
        .prepare(
          `select count(*) n, sum(sc >= 400) e, count(x) cx, sum(x) sx, min(x) mx, max(y) my,
             percentile_cont(x, 0.5) x50, percentile_cont(x, 0.95) x95, percentile_cont(y, 0.99) y99 from t ${where}`,
        )
        .get(...args) as Record<string, number>;
    const close = (a: number | null, b: number | null) =>
      assert.ok(
        a === b || (a !== null && b !== null && Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b))),
        `${a} vs ${b}`,
      );
    for (const [b, g, stats] of result.cells) {
      const want = expect('where b = ? and g = ?', [b, g]);
      assert.equal(stats.n, want.n);
      assert.equal(stats.e, want.e);
      assert.equal(stats.f[0][0], want.cx);
      close(stats.f[0][1], want.sx);
      assert.equal(stats.f[0][2], want.mx);
      assert.equal(stats.f[1][3], want.my);
      assert.deepEqual(stats.p, [[want.x50, want.x95], [want.y99]]);
    }
    assert.equal(result.cells.length, 18);
    for (const [b, stats] of result.buckets) {
      const want = expect('where b = ?', [b]);
      assert.equal(stats.n, want.n);
      assert.deepEqual(stats.p, [[want.x50, want.x95], [want.y99]]);
    }
    const want = expect('', []);
    assert.equal(result.total.n, 5000);
    assert.equal(result.total.e, want.e);
    close(result.total.f[0][1], want.sx);
    assert.equal(percentileOfSorted(sorted[0], 0.95), want.x95);
    assert.equal(percentileOfSorted(sorted[1], 0.99), want.y99);
    // No row: an empty answer, not an error.
    const none = decodeCells(
      (
        db.prepare('select gl_summary_cells(gl_summary_spec(?), b, sc, g, x, y) c from t where b < 0').get(spec) as {
          c: Buffer;
        }
      ).c,
    );
    assert.deepEqual(none.result.cells, []);
    assert.equal(none.result.total.n, 0);
  });
});
