/**
 * Rollups as their logs make them, worked out one log at a time (not by the code that writes them), and
 * the check that the stored rows of both rollup tables are exactly those.
 */
import assert from 'node:assert/strict';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import { ROLLUP_DIMENSIONS, SUMMED_FIELDS } from '../../src/logs/rollups/rollup-deltas.js';
import { binOf, decodeBins } from '../../src/logs/rollups/sketch.js';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const SUMMED = SUMMED_FIELDS;

/** The tables checked: their dimensions and grains as gatelog names them; what they add up to is worked out here. */
const TABLES = [
  {
    table: 'log_rollups',
    dimensions: ROLLUP_DIMENSIONS as readonly string[],
    grains: [MINUTE, HOUR, DAY],
    sketches: true,
  },
  {
    table: 'log_customer_rollups',
    dimensions: ['is_test', 'environment', 'log_type', 'customer_identifier'],
    grains: [HOUR, DAY],
    sketches: false,
  },
] as const;

type Row = Record<string, unknown>;
type Table = (typeof TABLES)[number];

/** The rollup rows the organization's logs make in `table`, keyed by grain, bucket and dimensions. */
function expectedRollups(logs: Row[], table: Table): Map<string, Row> {
  const rows = new Map<string, Row>();
  for (const log of logs) {
    for (const grain of table.grains) {
      const bucket = Math.floor(Number(log.timestamp) / grain) * grain;
      const key = JSON.stringify([grain, bucket, ...table.dimensions.map((d) => log[d])]);
      const row = rows.get(key) ?? { log_count: 0, failed_count: 0, latency: new Map(), ttft: new Map() };
      rows.set(key, row);
      row.log_count = Number(row.log_count) + 1;
      if (Number(log.status_code) >= 400) row.failed_count = Number(row.failed_count) + 1;
      for (const field of SUMMED) {
        if (log[field] === null) continue;
        row[`${field}_n`] = Number(row[`${field}_n`] ?? 0) + 1;
        row[`${field}_sum`] = Number(row[`${field}_sum`] ?? 0) + Number(log[field]);
      }
      const bin = (map: unknown, v: unknown) => {
        if (v === null) return;
        const m = map as Map<string, number>;
        m.set(binOf(Number(v)), (m.get(binOf(Number(v))) ?? 0) + 1);
      };
      bin(row.latency, log.latency);
      bin(row.ttft, log.time_to_first_token);
    }
  }
  return rows;
}

/** Every stored rollup row of the organization is what its logs add up to, and no other row is stored. */
export async function assertRollupsMatch(db: Kysely<Database>, organizationId: string): Promise<void> {
  const logs = (await db
    .selectFrom('logs')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .execute()) as Row[];
  for (const table of TABLES) {
    const expected = expectedRollups(logs, table);
    const stored = (await db
      .selectFrom(table.table as 'log_rollups')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .execute()) as Row[];
    assert.equal(stored.length, expected.size, `${table.table}: one row per grain, bucket and dimensions`);
    for (const row of stored) {
      const key = JSON.stringify([
        Number(row.grain_ms),
        Number(row.bucket_start),
        ...table.dimensions.map((d) => (typeof row[d] === 'string' ? row[d] : Number(row[d]))),
      ]);
      const what = `${table.table} ${key}`;
      const want = expected.get(key);
      assert.ok(want, `a rollup row no log makes: ${what}`);
      assert.equal(Number(row.log_count), want.log_count, what);
      assert.equal(Number(row.failed_count), want.failed_count, what);
      for (const field of SUMMED) {
        assert.equal(Number(row[`${field}_n`]), Number(want[`${field}_n`] ?? 0), `${what} ${field}_n`);
        const sum = Number(want[`${field}_sum`] ?? 0);
        assert.ok(Math.abs(Number(row[`${field}_sum`]) - sum) < 1e-6 * (1 + Math.abs(sum)), `${what} ${field}_sum`);
      }
      if (!table.sketches) continue;
      assert.deepEqual(decodeBins(row.latency_bins as string), want.latency, `${what} latency bins`);
      assert.deepEqual(decodeBins(row.time_to_first_token_bins as string), want.ttft, `${what} ttft bins`);
    }
  }
}
