/**
 * A group's rollup sketches merged by the database as a rollup summary reads them (`groupSketches`:
 * gatelog_sketch_sum on SQLite's reader threads, string_agg on PostgreSQL), against the same sketches
 * merged in JavaScript bin by bin: equal, whatever their spelling; null and empty sketches add nothing;
 * counts taken away cancel; no rows give no sketch. On the database GATELOG_TEST_DB names.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { connect, type DbHandle } from '../../src/db/connect.js';
import { groupSketches } from '../../src/logs/rollups/rollup-parts.js';
import { DenseSketch } from '../../src/logs/rollups/dense-sketch.js';
import { type Bins, binOf, decodeBins, encodeBins } from '../../src/logs/rollups/sketch.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/** A seeded generator, so that a failure can be run again. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Sketches merged as maps from their JSON (not the parse under test), bins at 0 left out. */
function mergedInJs(texts: (string | null)[]) {
  const bins: Bins = new Map();
  for (const text of texts) decodeBins(text, bins);
  return new Map([...bins].filter(([, n]) => n !== 0));
}

describe('rollup sketches merged by the database', () => {
  let database: TestDatabase;
  let handle: DbHandle;
  before(async () => {
    database = await createTestDatabase();
    handle = connect(database.target);
  });
  after(async () => {
    await handle.close();
    await database.drop();
  });

  /** Each group's merged sketch as the summary reads it (its bins), or null when the database gave none. */
  const merge = async (rows: [group: number, text: string | null][], where = sql`1 = 1`) => {
    const values = sql.join(
      rows.map(([g, b]) => sql`select cast(${g} as integer) as g, cast(${b} as text) as b`),
      sql` union all `,
    );
    const { rows: merged } = await sql<{ g: number; s: string | Uint8Array | null }>`
      select t.g as g, ${groupSketches(handle.dialect, 't.b')} as s from (${values}) t
      where ${where} group by t.g order by t.g`.execute(handle.reader);
    return merged.map(({ g, s }) => {
      if (s === null) return [Number(g), null] as const;
      const sketch = new DenseSketch();
      sketch.addStored(s);
      return [Number(g), sketch.bins()] as const;
    });
  };

  it('merges a group’s sketches as JavaScript does, in either spelling, each group apart', async () => {
    const next = random(17);
    const rows: [number, string | null][] = [];
    const byGroup = new Map<number, string[]>();
    for (let i = 0; i < 60; i++) {
      const bins: Bins = new Map();
      for (let k = 0; k < 1 + (i % 9) * 7; k++) {
        const bin = binOf(k % 11 === 0 ? 0 : Math.exp(next() * 14 - 7));
        bins.set(bin, (bins.get(bin) ?? 0) + 1);
      }
      // Every other sketch in PostgreSQL's jsonb spelling: a space after each colon and comma.
      const text =
        i % 2 === 0
          ? encodeBins(bins)
          : `{${[...bins]
              .reverse()
              .map(([k, n]) => `"${k}": ${n}`)
              .join(', ')}}`;
      const group = i % 3;
      rows.push([group, text]);
      byGroup.set(group, [...(byGroup.get(group) ?? []), text]);
    }
    const merged = await merge(rows);
    assert.deepEqual(
      merged.map(([g]) => g),
      [0, 1, 2],
    );
    for (const [g, bins] of merged) assert.deepEqual(bins, mergedInJs(byGroup.get(g)!), `group ${g}`);
  });

  it('adds nothing for null and empty sketches, cancels counts taken away, and gives no row for no rows', async () => {
    const merged = await merge([
      [0, null],
      [0, '{}'],
      [0, '{"12":3,"z":1}'],
      [0, null],
      [1, '{"-40":2,"7":5}'],
      [1, '{"-40":-2}'],
      [2, null],
      [3, '{}'],
    ]);
    const byGroup = new Map(merged);
    assert.deepEqual(byGroup.get(0), mergedInJs(['{"12":3,"z":1}']));
    assert.deepEqual(byGroup.get(1), mergedInJs(['{"7":5}']));
    // A group of null sketches has none (as sum() of nulls); one of empty sketches has no bin.
    assert.equal(byGroup.get(2), null);
    assert.deepEqual(byGroup.get(3), new Map());
    assert.deepEqual(await merge([[0, '{"3":1}']], sql`t.g > 0`), []);
  });
});
