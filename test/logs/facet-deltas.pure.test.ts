import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CUSTOMER_FIELD,
  DAY_MS,
  FACET_FIELDS,
  type FacetSource,
  facetDeltas,
  GRAINS,
  HOUR_MS,
  bucketOf,
} from '../../src/logs/facets.js';

const T0 = Date.UTC(2026, 10, 24, 9, 59, 59, 500);

function source(over: Partial<FacetSource> & { columns?: Record<string, unknown> } = {}): FacetSource {
  return {
    organization_id: 'org-a',
    is_test: 0,
    timestamp: T0,
    metadata: [],
    ...over,
    columns: { model: 'm1', status_code: 200, customer_identifier: null, ...over.columns },
  };
}

/** The counts the deltas must add up to, worked out one log, field and grain at a time. */
function expected(added: FacetSource[], removed: FacetSource[]): Map<string, number> {
  const counts = new Map<string, number>();
  const bump = (log: FacetSource, sign: number) => {
    for (const grain of GRAINS) {
      const at = `${log.organization_id}|${log.is_test}|${grain}|${bucketOf(log.timestamp, grain)}`;
      const values: [string, string][] = [];
      for (const f of FACET_FIELDS) {
        // The customers' rollups count these (list/facet-rows.ts).
        if (f.name === CUSTOMER_FIELD) continue;
        const v = log.columns[f.column];
        if (v !== null && v !== undefined) values.push([f.name, String(v)]);
      }
      for (const m of log.metadata) values.push([`metadata__${m.key}`, m.value_text]);
      for (const [field, value] of values) {
        const key = `${at}|${field}|${value}`;
        counts.set(key, (counts.get(key) ?? 0) + sign);
      }
    }
  };
  for (const log of added) bump(log, 1);
  for (const log of removed) bump(log, -1);
  return counts;
}

describe('facet deltas', () => {
  it('count each field and metadata value once per log, per grain and bucket, across groups that alternate', () => {
    const added = [
      source(),
      source({ timestamp: T0 + 1000 }), // the next hour, same day
      source({ timestamp: T0 + 2000, columns: { model: 'm2' } }),
      source({ organization_id: 'org-b' }),
      source({ is_test: 1, metadata: [{ key: 'team', value_text: 'x' }] }),
      source({ timestamp: T0 + DAY_MS, metadata: [{ key: 'team', value_text: 'x' }] }),
      source(), // back to the first group after others
    ];
    const removed = [source({ columns: { model: 'm1', status_code: 500 } })];
    const deltas = facetDeltas(added, removed);
    const got = new Map(
      deltas.map((d) => [
        `${d.organization_id}|${d.is_test}|${d.grain_ms}|${d.bucket_start}|${d.field}|${d.value_text}`,
        d.log_count,
      ]),
    );
    assert.equal(got.size, deltas.length, 'one delta per distinct row');
    assert.deepEqual(got, expected(added, removed));
    // By hand: org-a's prod logs of model m1 are two in the first hour and one in the next (same day), less the one removed.
    assert.equal(got.get(`org-a|0|${HOUR_MS}|${bucketOf(T0, HOUR_MS)}|model|m1`), 2 - 1);
    assert.equal(got.get(`org-a|0|${DAY_MS}|${bucketOf(T0, DAY_MS)}|model|m1`), 3 - 1);
    assert.equal(got.get(`org-a|0|${HOUR_MS}|${bucketOf(T0, HOUR_MS)}|status_code|500`), -1);
  });

  it('come in one fixed order whatever the order of the logs (writers lock rows alike)', () => {
    const logs = [
      source({ organization_id: 'org-b' }),
      source({ timestamp: T0 + 1000, columns: { model: 'z' } }),
      source({ metadata: [{ key: 'k', value_text: 'v' }] }),
      source({ is_test: 1 }),
    ];
    const key = (d: ReturnType<typeof facetDeltas>[number]) => JSON.stringify(d);
    const forward = facetDeltas(logs).map(key);
    const backward = facetDeltas([...logs].reverse()).map(key);
    assert.deepEqual(backward, forward);
  });

  it("leave the customers' counts to the customers' rollups", () => {
    const deltas = facetDeltas([source({ columns: { customer_identifier: 'acme' } })]);
    assert.ok(deltas.some((d) => d.field === 'model'));
    assert.equal(deltas.filter((d) => d.field === CUSTOMER_FIELD).length, 0);
  });
});
