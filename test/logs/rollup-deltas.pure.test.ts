/**
 * The rollups' deltas for a batch of logs (written and removed) are what adding each log to each of its
 * rows, one by one, gives: every row of every grain, its counts, sums and sketch bins — in runs of logs
 * that share their dimensions and in logs that all differ, across minutes, hours and days.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type RollupDelta,
  rollupDeltas,
  type RollupKind,
  type RollupSource,
  ROLLUP_KINDS,
  SUMMED_FIELDS,
} from '../../src/logs/rollups/rollup-deltas.js';
import { binOf } from '../../src/logs/rollups/sketch.js';

/** A small deterministic generator (mulberry32), so a failure can be replayed. */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const DAY = 86_400_000;
const START = Date.UTC(2026, 10, 1);

function logs(seed: number, count: number, runs: boolean): RollupSource[] {
  const next = random(seed);
  const pick = <T>(values: readonly T[]) => values[Math.floor(next() * values.length)];
  const out: RollupSource[] = [];
  let previous: RollupSource | null = null;
  for (let i = 0; i < count; i++) {
    // In runs: most logs repeat the previous one's dimensions, as a batch's logs mostly do.
    const same = runs && previous !== null && next() < 0.7;
    // Values in quarters: their sums are exact in any order.
    const value = () => (next() < 0.2 ? null : Math.floor(next() * 40) / 4);
    const log = {
      organization_id: same ? previous!.organization_id : pick(['org-a', 'org-b']),
      timestamp: same ? previous!.timestamp + 1 : START + Math.floor(next() * 3 * DAY),
      is_test: same ? previous!.is_test : pick([0, 1]),
      environment: same ? previous!.environment : pick(['prod', 'staging']),
      model: same ? previous!.model : pick(['gpt-4o', 'claude', 'o1']),
      provider_id: same ? previous!.provider_id : pick(['openai', 'anthropic']),
      organization_key_name: same ? previous!.organization_key_name : pick(['k1', 'k2']),
      log_type: same ? previous!.log_type : pick(['chat', 'embedding']),
      status: same ? previous!.status : pick(['success', 'error']),
      status_code: same ? previous!.status_code : pick([200, 429, 500]),
      cache_hit: same ? previous!.cache_hit : pick([0, 1]),
      customer_identifier: same ? previous!.customer_identifier : `customer-${Math.floor(next() * 30)}`,
      ...Object.fromEntries(SUMMED_FIELDS.map((f) => [f, value()])),
    } as unknown as RollupSource;
    out.push(log);
    previous = log;
  }
  return out;
}

/** The rows as adding each log to each of its rows one by one gives, by key; empty rows left out. */
function reference(kind: RollupKind, added: RollupSource[], removed: RollupSource[]) {
  const rows = new Map<string, RollupDelta>();
  const add = (log: RollupSource, sign: number) => {
    for (const grain of kind.grains) {
      const bucket = Math.floor(log.timestamp / grain) * grain;
      const dims = kind.dimensions.map((d) => log[d]);
      const key = JSON.stringify([log.organization_id, grain, bucket, ...dims]);
      let row = rows.get(key);
      if (!row) {
        row = {
          kind,
          organization_id: log.organization_id,
          grain_ms: grain,
          bucket_start: bucket,
          dims,
          log_count: 0,
          failed_count: 0,
          sums: SUMMED_FIELDS.map(() => [0, 0]),
          bins: kind.sketched.map(() => new Map()),
        };
        rows.set(key, row);
      }
      row.log_count += sign;
      if (log.status_code >= 400) row.failed_count += sign;
      SUMMED_FIELDS.forEach((f, i) => {
        if (log[f] === null) return;
        row!.sums[i][0] += sign;
        row!.sums[i][1] += sign * Number(log[f]);
      });
      kind.sketched.forEach((f, k) => {
        if (log[f] === null) return;
        const bin = binOf(Number(log[f]));
        row!.bins[k].set(bin, (row!.bins[k].get(bin) ?? 0) + sign);
      });
    }
  };
  for (const log of added) add(log, 1);
  for (const log of removed) add(log, -1);
  return comparable(kind, [...rows.values()]);
}

/** Deltas as plain values by key, bins without zeros, empty rows left out. */
function comparable(kind: RollupKind, deltas: RollupDelta[]) {
  const out = new Map<string, unknown>();
  for (const d of deltas) {
    assert.equal(d.kind, kind);
    const bins = d.bins.map((b) => Object.fromEntries([...b].filter(([, n]) => n !== 0).sort()));
    const empty =
      d.log_count === 0 && d.sums.every(([n, s]) => n === 0 && s === 0) && bins.every((b) => !Object.keys(b).length);
    if (empty) continue;
    const key = JSON.stringify([d.organization_id, d.grain_ms, d.bucket_start, ...d.dims]);
    assert.ok(!out.has(key), `one delta per row: ${key}`);
    out.set(key, { log_count: d.log_count, failed_count: d.failed_count, sums: d.sums, bins });
  }
  return out;
}

describe('rollup deltas', () => {
  for (const runs of [true, false]) {
    it(`match each log added to each of its rows (${runs ? 'logs in runs' : 'every log different'})`, () => {
      for (const seed of [1, 2, 3]) {
        const added = logs(seed, 400, runs);
        const removed = [...logs(seed + 100, 150, runs), ...added.slice(0, 50)];
        for (const order of ['locking', 'any'] as const) {
          const deltas = rollupDeltas(added, removed, ROLLUP_KINDS, order);
          for (const kind of ROLLUP_KINDS) {
            const ofKind = deltas.filter((d) => d.kind === kind);
            const want = reference(kind, added, removed);
            assert.deepEqual(comparable(kind, ofKind), want, `${kind.table}, seed ${seed}, ${order}`);
            assert.ok(new Set(ofKind.map((d) => d.grain_ms)).size === kind.grains.length, 'every grain');
          }
        }
      }
    });
  }

  it('give nothing for logs removed as they were added, and keep tables in order', () => {
    const batch = logs(7, 200, true);
    assert.deepEqual(rollupDeltas(batch, batch), []);
    const deltas = rollupDeltas(batch);
    const tables = deltas.map((d) => d.kind.table);
    assert.deepEqual(
      tables,
      [...tables].sort(
        (a, b) => ROLLUP_KINDS.findIndex((k) => k.table === a) - ROLLUP_KINDS.findIndex((k) => k.table === b),
      ),
    );
  });
});
