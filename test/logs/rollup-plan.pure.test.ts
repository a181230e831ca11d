/**
 * Which rollup table a summary reads (rollup-plan.ts rollupRead): log_rollups for what it holds, the
 * customer rollups for a summary by customer (or filtered by one) of counts and sums whose buckets fall
 * on whole hours, and none — the logs — for everything else.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rollupRead } from '../../src/logs/rollups/rollup-plan.js';
import { planBuckets } from '../../src/logs/summary/buckets.js';
import { parseSummaryBody } from '../../src/logs/summary/request.js';

const HOUR = 3_600_000;

/** The table a body's summary reads, its spans' grains, or null (the logs). */
function tableOf(body: Record<string, unknown>) {
  const request = parseSummaryBody('org', {
    start_time: '2026-10-01T00:00:00Z',
    end_time: '2026-10-08T00:00:00Z',
    ...body,
  });
  const read = rollupRead(request, planBuckets(request.scope.start, request.scope.end, request.tz, request.size));
  return read && { table: read.kind.table, grains: [...new Set(read.spans.map((s) => s.grain))].sort((x, y) => x - y) };
}

const byCustomer = { group_by: ['customer_identifier'] };
const sums = [{ agg: 'count' }, { agg: 'error_rate' }, { field: 'cost', agg: 'sum' }, { field: 'latency', agg: 'avg' }];

describe('the rollup table a summary reads', () => {
  it('reads log_rollups for what it holds, whatever the customer rollups hold too', () => {
    assert.equal(tableOf({ group_by: ['model'] })?.table, 'log_rollups');
    assert.equal(tableOf({ group_by: ['log_type'], environment: 'prod' })?.table, 'log_rollups');
    assert.equal(tableOf({ bucket: '15m', metrics: sums })?.table, 'log_rollups');
  });

  it('reads the customer rollups by customer, filtered by what they hold, counts and sums', () => {
    for (const body of [
      { ...byCustomer, metrics: sums },
      { ...byCustomer, metrics: sums, bucket: '1h', environment: 'prod', is_test: true },
      { ...byCustomer, filters: { log_type: { operator: 'in', value: ['chat', 'embedding'] } } },
      { ...byCustomer, group_by: ['customer_identifier', 'log_type'] },
      { filters: { customer_identifier: { value: ['acme'] } }, metrics: sums },
      { ...byCustomer, bucket: '1d', tz: 'America/New_York' },
    ]) {
      assert.equal(tableOf(body)?.table, 'log_customer_rollups', JSON.stringify(body));
    }
    // Days and hours, and the logs for a start and end inside an hour.
    const odd = tableOf({
      ...byCustomer,
      bucket: '1d',
      start_time: '2026-10-01T00:30:00Z',
      end_time: '2026-10-08T10:20:00Z',
    });
    assert.deepEqual(odd, { table: 'log_customer_rollups', grains: [0, HOUR, 86_400_000] });
  });

  it('reads the logs by customer when the customer rollups cannot answer', () => {
    for (const body of [
      { ...byCustomer, metrics: [{ field: 'latency', agg: 'p95' }] },
      { ...byCustomer, metrics: [{ field: 'latency', agg: 'max' }] },
      { ...byCustomer, filters: { model: { value: ['gpt-4o'] } } },
      { ...byCustomer, group_by: ['customer_identifier', 'model'] },
      { ...byCustomer, filters: { metadata__tier: { value: ['gold'] } } },
      { ...byCustomer, bucket: '15m' },
      { ...byCustomer, bucket: '1h', tz: 'Asia/Kathmandu' },
      { ...byCustomer, start_time: '2026-10-07T22:00:00Z' },
      { ...byCustomer, exact: true },
    ]) {
      assert.equal(tableOf(body), null, JSON.stringify(body));
    }
  });
});
