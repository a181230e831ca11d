/**
 * POST /api/request-logs/summary/ in time: buckets start at local midnight, Monday or the zone's own
 * hour, every hour bucket is one hour when clocks go back or forward, and `auto` picks between 30 and 120
 * buckets; values against the reference (support/seeded-summary.ts), on the database GATELOG_TEST_DB names.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertClose, END, iso, type Metric, reference, seededSummarySuite } from '../support/seeded-summary.js';

describe('the request-log summary in time: buckets and time zones', () => {
  const seeded = seededSummarySuite();

  it('answers daily buckets from local midnight in America/New_York across the end of DST', async () => {
    const metrics = seeded.allMetrics();
    const res = await seeded.summaryOfSeededRange({ bucket: '1d', tz: 'America/New_York', metrics });
    assert.equal(res.status, 200, res.text);
    const starts = [
      '2026-10-28T04:00:00Z',
      '2026-10-29T04:00:00Z',
      '2026-10-30T04:00:00Z',
      '2026-10-31T04:00:00Z',
      '2026-11-01T04:00:00Z',
      // Clocks went back at 2:00 on November 1: midnight is now 05:00Z, and that day lasted 25 hours.
      '2026-11-02T05:00:00Z',
      '2026-11-03T05:00:00Z',
    ];
    assert.deepEqual(res.body.buckets, starts.map(iso));
    assert.equal(res.body.bucket, '1d');
    assert.equal(res.body.tz, 'America/New_York');
    assert.equal(res.body.series.length, 1);
    assert.deepEqual(res.body.series[0].group, {});
    const ms = starts.map((s) => Date.parse(s));
    seeded.checkPoints(res.body.series[0].points, seeded.logs, ms, metrics, 'daily');
    seeded.checkPoints(res.body.totals.points, seeded.logs, ms, metrics, 'totals');
    metrics.forEach((m, j) =>
      assertClose(res.body.totals.values[j], reference(seeded.logs, m, seeded.scoreField), `total ${m.agg}`),
    );
    assert.equal(res.body.totals.values[0], 400, 'the test-key log is out of the production scope');
  });

  it('makes every hour bucket one hour when clocks go back or forward; days follow local midnight', async () => {
    const metrics: Metric[] = [{ agg: 'count' }, { field: 'latency', agg: 'p90' }, { field: 'cost', agg: 'max' }];
    const back = await seeded.summary({
      start_time: '2026-11-01T03:00:00Z',
      end_time: '2026-11-01T09:00:00Z',
      bucket: '1h',
      tz: 'America/New_York',
      metrics,
    });
    assert.equal(back.status, 200, back.text);
    // Local 1:00 EDT (05:00Z) and 1:00 EST (06:00Z) are two buckets: 7 hours, 7 buckets.
    const starts = ['03', '04', '05', '06', '07', '08', '09'].map((h) => `2026-11-01T${h}:00:00Z`);
    assert.deepEqual(back.body.buckets, starts.map(iso));
    const inRange = seeded.logs.filter(
      (l) => l.ts >= Date.parse(starts[0]) && l.ts <= Date.parse('2026-11-01T09:00:00Z'),
    );
    seeded.checkPoints(
      back.body.series[0].points,
      inRange,
      starts.map((s) => Date.parse(s)),
      metrics,
      'hourly',
    );
    assert.ok(back.body.series[0].points[2][0] > 0, 'the first 1:00 holds logs');
    assert.ok(back.body.series[0].points[3][0] > 0, 'the second 1:00 holds logs');

    const forward = await seeded.summary({
      start_time: '2027-03-14T05:00:00Z',
      end_time: '2027-03-14T09:00:00Z',
      bucket: '1h',
      tz: 'America/New_York',
      metrics,
    });
    assert.equal(forward.status, 200, forward.text);
    // 2:00 EST never happened: 1:00 EST (06:00Z) is followed by 3:00 EDT (07:00Z).
    assert.deepEqual(
      forward.body.buckets,
      ['05', '06', '07', '08', '09'].map((h) => iso(`2027-03-14T${h}:00:00Z`)),
    );
    // Empty buckets are present: counts 0, everything else null.
    for (const point of forward.body.series[0].points) assert.deepEqual(point, [0, null, null]);
    const days = await seeded.summary({
      start_time: '2027-03-13T12:00:00Z',
      end_time: '2027-03-16T12:00:00Z',
      bucket: '1d',
      tz: 'America/New_York',
    });
    assert.deepEqual(
      days.body.buckets,
      ['2027-03-13T05:00:00Z', '2027-03-14T05:00:00Z', '2027-03-15T04:00:00Z', '2027-03-16T04:00:00Z'].map(iso),
    );
  });

  it('starts weeks on local Monday and hours at the zone’s own hour', async () => {
    const weeks = await seeded.summary({
      start_time: '2026-10-29T00:00:00Z',
      end_time: '2026-11-10T00:00:00Z',
      bucket: '1w',
      tz: 'America/New_York',
    });
    assert.equal(weeks.status, 200, weeks.text);
    assert.deepEqual(
      weeks.body.buckets,
      ['2026-10-26T04:00:00Z', '2026-11-02T05:00:00Z', '2026-11-09T05:00:00Z'].map(iso),
    );
    assert.equal(
      weeks.body.series[0].points[0][0],
      seeded.logs.filter((l) => l.ts < Date.parse('2026-11-02T05:00:00Z')).length,
    );
    const kathmandu = await seeded.summary({
      start_time: '2026-10-30T00:00:00Z',
      end_time: '2026-10-30T02:00:00Z',
      bucket: '1h',
      tz: 'Asia/Kathmandu',
    });
    // UTC+5:45: local hours begin at a quarter past the UTC hour.
    assert.deepEqual(
      kathmandu.body.buckets,
      ['2026-10-29T23:15:00Z', '2026-10-30T00:15:00Z', '2026-10-30T01:15:00Z'].map(iso),
    );
  });

  it('picks between 30 and 120 buckets for auto', async () => {
    const end = Date.parse(END);
    for (const hours of [1, 6, 24, 24 * 7, 24 * 30, 24 * 365]) {
      const res = await seeded.summary({ start_time: new Date(end - hours * 3_600_000).toISOString(), end_time: END });
      assert.equal(res.status, 200, res.text);
      const n = res.body.buckets.length;
      assert.ok(n >= 30 && n <= 120, `${hours} h: ${n} buckets of ${res.body.bucket}`);
    }
  });
});
