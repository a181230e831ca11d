/**
 * POST /api/request-logs/summary/ against a reference computed from the same seeded logs
 * (support/seeded-summary.ts): counts, sums, averages, every percentile, error rates, group-by with
 * "other", the list's scope and filters, its bounds and its 400s; on the database GATELOG_TEST_DB names.
 * (Buckets in time zones, across DST: logs/summary-time-buckets.test.ts.)
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { api } from '../support/harness.js';
import {
  assertClose,
  END,
  MODELS,
  type Metric,
  reference,
  seededSummarySuite,
  START,
} from '../support/seeded-summary.js';

describe('the request-log summary', () => {
  const seeded = seededSummarySuite();

  it('groups by model: the top groups by count, the rest as one "other" series', async () => {
    const metrics: Metric[] = [{ agg: 'count' }, { field: 'cost', agg: 'sum' }, { field: 'latency', agg: 'p95' }];
    const res = await seeded.summaryOfSeededRange({ bucket: '1d', metrics, group_by: ['model'], limit: 3 });
    assert.equal(res.status, 200, res.text);
    const counts = MODELS.map((m) => ({ m, n: seeded.logs.filter((l) => l.model === m).length })).sort(
      (x, y) => y.n - x.n || (x.m < y.m ? -1 : 1),
    );
    const top = counts.slice(0, 3).map((c) => c.m);
    assert.deepEqual(
      res.body.series.map((s: { group: unknown; other: boolean }) => [s.group, s.other]),
      [...top.map((m) => [{ model: m }, false]), [{}, true]],
    );
    const starts = res.body.buckets.map((b: string) => Date.parse(b));
    assert.equal(starts[0], Date.parse('2026-10-29T00:00:00Z'), 'UTC days by default');
    seeded.checkModelSeries(res.body.series, top, starts, metrics);
  });

  it('answers metrics without percentiles (all of which add up) per bucket, per group and in total', async () => {
    const metrics = seeded.allMetrics().filter((m) => !['p50', 'p90', 'p95', 'p99'].includes(m.agg));
    const res = await seeded.summaryOfSeededRange({ bucket: '1d', metrics, group_by: ['model'], limit: 2 });
    assert.equal(res.status, 200, res.text);
    const starts = res.body.buckets.map((b: string) => Date.parse(b));
    seeded.checkPoints(res.body.totals.points, seeded.logs, starts, metrics, 'totals');
    metrics.forEach((m, j) =>
      assertClose(res.body.totals.values[j], reference(seeded.logs, m, seeded.scoreField), `total ${m.agg}`),
    );
    const top = res.body.series
      .filter((s: { other: boolean }) => !s.other)
      .map((s: { group: { model: string } }) => s.group.model);
    assert.equal(top.length, 2);
    seeded.checkModelSeries(res.body.series, top, starts, metrics);
  });

  it('groups by a number field: each status code its series, with its own logs’ metrics', async () => {
    const metrics: Metric[] = [{ agg: 'count' }, { field: 'latency', agg: 'p50' }];
    for (const filters of [undefined, { model: { value: [MODELS[0]] } }]) {
      const res = await seeded.summaryOfSeededRange({ bucket: '1d', metrics, group_by: ['status_code'], filters });
      assert.equal(res.status, 200, res.text);
      const scoped = filters ? seeded.logs.filter((l) => l.model === MODELS[0]) : seeded.logs;
      const failed = scoped.filter((l) => l.failed);
      const ok = scoped.filter((l) => !l.failed);
      const [first, second] = ok.length >= failed.length ? [ok, failed] : [failed, ok];
      assert.deepEqual(
        res.body.series.map((s: { group: unknown }) => s.group),
        [{ status_code: first === ok ? 200 : 500 }, { status_code: first === ok ? 500 : 200 }],
      );
      const starts = res.body.buckets.map((b: string) => Date.parse(b));
      seeded.checkPoints(res.body.series[0].points, first, starts, metrics, 'first status');
      seeded.checkPoints(res.body.series[1].points, second, starts, metrics, 'second status');
    }
  });

  it('groups by two fields, an absent metadata key as a null group, with the list’s filters', async () => {
    const metrics: Metric[] = [{ agg: 'count' }, { field: 'latency', agg: 'p50' }, { agg: 'error_rate' }];
    const res = await seeded.summaryOfSeededRange({
      bucket: '1d',
      metrics,
      group_by: ['customer_identifier', 'metadata__feature'],
      filters: { model: { operator: 'in', value: ['model-a', 'model-b'] } },
      limit: 100,
    });
    assert.equal(res.status, 200, res.text);
    const matching = seeded.logs.filter((l) => l.model === 'model-a' || l.model === 'model-b');
    const starts = res.body.buckets.map((b: string) => Date.parse(b));
    assert.equal(res.body.series.length, 9, '3 customers × (x, y, none)');
    let seen = 0;
    for (const s of res.body.series) {
      assert.equal(s.other, false);
      const group = matching.filter(
        (l) => l.customer === s.group.customer_identifier && l.feature === s.group.metadata__feature,
      );
      seen += group.length;
      seeded.checkPoints(s.points, group, starts, metrics, JSON.stringify(s.group));
    }
    assert.equal(seen, matching.length);
    assert.deepEqual(
      res.body.series.map((s: { points: number[][] }) => s.points.reduce((n, p) => n + p[0], 0)),
      res.body.series
        .map((s: { points: number[][] }) => s.points.reduce((n, p) => n + p[0], 0))
        .sort((x: number, y: number) => y - x),
      'ordered by count',
    );
  });

  it('reads the environment scope as the list does', async () => {
    const body = {
      start_time: START,
      end_time: END,
      bucket: '1d',
      metrics: [{ field: 'cost', agg: 'sum' }, { agg: 'count' }],
    };
    const test = await seeded.summary({ ...body, is_test: true });
    assert.deepEqual(test.body.totals.values, [5, 1], 'only the test-key log');
    const all = await seeded.summary({ ...body, all_envs: true });
    assert.equal(all.body.totals.values[1], 401);
    assert.equal((await seeded.summary({ ...body, all_envs: true, is_test: false })).body.totals.values[1], 400);
    const prod = await seeded.summary({ ...body, all_envs: true, environment: 'prod' });
    assert.equal(prod.body.totals.values[1], 400);
    const testEnv = await seeded.summary({ ...body, all_envs: true, environment: 'test' });
    assert.deepEqual(testEnv.body.totals.values, [5, 1]);
    const none = await seeded.summary({ ...body, environment: 'staging' });
    assert.equal(none.body.totals.values[1], 0);
  });

  it('takes error_rate with a field, as every metric is shaped, and ignores the field', async () => {
    const body = { start_time: START, end_time: END, bucket: '1d' };
    const plain = await seeded.summary({ ...body, metrics: [{ agg: 'error_rate' }] });
    const withField = await seeded.summary({ ...body, metrics: [{ field: 'latency', agg: 'error_rate' }] });
    assert.equal(withField.status, 200, withField.text);
    assert.deepEqual(withField.body.metrics, [{ field: null, agg: 'error_rate' }]);
    assert.deepEqual(withField.body.totals, plain.body.totals);
    assertClose(
      withField.body.totals.values[0],
      reference(seeded.logs, { agg: 'error_rate' }, seeded.scoreField),
      'error rate',
    );
  });

  it('answers the largest summary the bounds allow: 120 buckets × 101 series × 20 metrics', async () => {
    const res = await seeded.summaryOfSeededRange({
      group_by: ['customer_identifier'],
      limit: 100,
      metrics: Array.from({ length: 20 }, () => ({ agg: 'count' })),
    });
    assert.equal(res.status, 200, res.text);
    assert.ok(res.body.buckets.length >= 30 && res.body.buckets.length <= 120, String(res.body.buckets.length));
  });

  it('names every wrong input in a 400', async () => {
    const cases: [unknown, string][] = [
      [{ start_time: 'yesterday' }, 'start_time'],
      [{ start_time: END, end_time: START }, 'start_time'],
      [{ start_time: '1990-01-01T00:00:00Z', end_time: END }, 'start_time'],
      [{ is_test: 'maybe' }, 'is_test'],
      [{ bucket: '2h' }, 'bucket'],
      [{ tz: 'Mars/Olympus' }, 'tz'],
      [{ metrics: [] }, 'metrics'],
      [{ metrics: [{ agg: 'median', field: 'cost' }] }, 'metrics.0.agg'],
      [{ metrics: [{ agg: 'count' }, { agg: 'sum', field: 'model' }] }, 'metrics.1.field'],
      [{ metrics: [{ agg: 'p50' }] }, 'metrics.0.field'],
      [{ group_by: ['model', 'cost'] }, 'group_by.1'],
      [{ group_by: ['model', 'status', 'log_type'] }, 'group_by'],
      [{ limit: 101 }, 'limit'],
      [{ limit: 0 }, 'limit'],
      [{ filters: { nope: { value: 1 } } }, 'filters.nope'],
      [{ colour: 'red' }, 'colour'],
      [{ start_time: '2020-01-01T00:00:00Z', end_time: END, bucket: '1m' }, 'bucket'],
      // 1,464 hours × (101 series + the totals) × 20 metrics: an answer of 3 million values.
      [
        {
          start_time: '2026-09-01T00:00:00Z',
          end_time: '2026-10-31T23:00:00Z',
          bucket: '1h',
          group_by: ['model'],
          limit: 100,
          metrics: Array.from({ length: 20 }, () => ({ agg: 'count' })),
        },
        'bucket',
      ],
    ];
    for (const [body, param] of cases) {
      const res = await seeded.summary(body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.error.param, param, JSON.stringify(body));
    }
    const anonymous = await api(seeded.t.baseUrl, 'POST', '/api/request-logs/summary/', { body: {} });
    assert.equal(anonymous.status, 401);
  });
});
