/**
 * POST /api/request-logs/summary/ against a reference computed here from the same seeded logs: counts,
 * sums, averages, every percentile, error rates, bucket edges across DST changes, group-by with
 * "other", the list's scope and filters; on the database GATELOG_TEST_DB names.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createApiKey } from '../../src/auth/api-keys.js';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';
import { rng } from '../support/rng.js';

interface Seeded {
  ts: number;
  model: string;
  customer: string;
  feature: string | null;
  failed: boolean;
  cost: number;
  latency: number;
  ttft: number | null;
  prompt_tokens: number;
  score: number | null;
  unique_id?: string;
}

const START = '2026-10-29T00:00:00Z';
const END = '2026-11-04T00:00:00Z';
const MODELS = ['model-a', 'model-b', 'model-c', 'model-d', 'model-e'];
// Uneven weights, so the top groups by count are clear.
const MODEL_WEIGHTS = [40, 25, 15, 12, 8];

function seed(count: number): Seeded[] {
  const r = rng(40);
  const from = Date.parse(START);
  const span = Date.parse(END) - from;
  const logs: Seeded[] = [];
  for (let i = 0; i < count; i++) {
    let w = r.next() * 100;
    let m = 0;
    while (w >= MODEL_WEIGHTS[m]) w -= MODEL_WEIGHTS[m++];
    // A quarter of the logs in the hours around the end of DST in New York (2026-11-01 05:00–08:00Z).
    const ts =
      i % 4 === 0 ? Date.parse('2026-11-01T04:30:00Z') + r.int(0, 4 * 3_600_000) : from + Math.floor(r.next() * span);
    logs.push({
      ts,
      model: MODELS[m],
      customer: r.pick(['c1', 'c2', 'c3']),
      feature: r.pick(['x', 'y', null]),
      failed: r.next() < 0.15,
      cost: r.int(0, 1_000_000) / 1e6,
      latency: r.int(1, 5000) / 1000,
      ttft: r.next() < 0.3 ? null : r.int(1, 900) / 1000,
      prompt_tokens: r.int(0, 2000),
      score: r.next() < 0.2 ? r.int(0, 10) / 2 : null,
    });
  }
  return logs;
}

/** percentile_cont: interpolated between the two nearest of the sorted values. */
function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const pos = p * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

type Metric = { field?: string; agg: string };

function reference(logs: Seeded[], metric: Metric, scoreField: string): number | null {
  if (metric.agg === 'error_rate') return logs.length === 0 ? null : logs.filter((l) => l.failed).length / logs.length;
  if (!metric.field) return logs.length;
  const pickers: Record<string, (l: Seeded) => number | null> = {
    cost: (l) => l.cost,
    latency: (l) => l.latency,
    time_to_first_token: (l) => l.ttft,
    prompt_tokens: (l) => l.prompt_tokens,
    [scoreField]: (l) => l.score,
  };
  const values = logs.map(pickers[metric.field]).filter((v): v is number => v !== null);
  const p = { p50: 0.5, p90: 0.9, p95: 0.95, p99: 0.99 }[metric.agg];
  if (p !== undefined) return percentile(values, p);
  if (metric.agg === 'count') return values.length;
  if (values.length === 0) return null;
  const sum = values.reduce((a, b) => a + b, 0);
  if (metric.agg === 'sum') return sum;
  if (metric.agg === 'avg') return sum / values.length;
  if (metric.agg === 'min') return Math.min(...values);
  return Math.max(...values);
}

function assertClose(actual: unknown, expected: number | null, what: string) {
  if (expected === null) return assert.equal(actual, null, what);
  assert.equal(typeof actual, 'number', `${what}: ${JSON.stringify(actual)}`);
  const tolerance = 1e-9 * Math.max(1, Math.abs(expected));
  assert.ok(Math.abs((actual as number) - expected) <= tolerance, `${what}: ${actual} ≠ ${expected}`);
}

/** Logs in [starts[i], starts[i+1]) — the last bucket up to the range's end. */
const inBucket = (logs: Seeded[], starts: number[], i: number) =>
  logs.filter((l) => l.ts >= starts[i] && (i + 1 === starts.length || l.ts < starts[i + 1]));

const iso = (s: string) => new Date(s).toISOString();

describe('the request-log summary', () => {
  let t: TestApp;
  let a: Tenant;
  let logs: Seeded[];
  let scoreField: string;
  const summary = (body: unknown, key = a.key) => api(t.baseUrl, 'POST', '/api/request-logs/summary/', { key, body });

  before(async () => {
    t = await startApp();
    a = await t.tenant();
    logs = seed(400);
    const res = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', {
      key: a.key,
      body: logs.map((l) => ({
        timestamp: new Date(l.ts).toISOString(),
        model: l.model,
        customer_identifier: l.customer,
        metadata: l.feature === null ? {} : { feature: l.feature },
        status_code: l.failed ? 500 : 200,
        cost: l.cost,
        latency: l.latency,
        time_to_first_token: l.ttft,
        prompt_tokens: l.prompt_tokens,
        completion_tokens: 1,
      })),
    });
    assert.equal(res.status, 201, res.text);
    res.body.unique_ids.forEach((id: string, i: number) => (logs[i].unique_id = id));
    // A test key of the same organization, and its log in the same range: outside the default scope.
    const testKey = await createApiKey(t.db.db, { organizationId: a.org.id, name: 'test', isTest: true });
    const tested = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', {
      key: testKey.key,
      body: [{ timestamp: '2026-10-30T12:00:00Z', model: 'model-a', cost: 5 }],
    });
    assert.equal(tested.status, 201, tested.text);
    const evaluator = await api(t.baseUrl, 'POST', '/api/evaluators/', { key: a.key, body: { name: 'quality' } });
    assert.equal(evaluator.status, 201, evaluator.text);
    scoreField = `scores__${evaluator.body.id}`;
    await t.flush();
    for (const l of logs.filter((x) => x.score !== null)) {
      const s = await api(t.baseUrl, 'POST', `/api/logs/${l.unique_id}/scores/`, {
        key: a.key,
        body: { evaluator_id: evaluator.body.id, numerical_value: l.score },
      });
      assert.equal(s.status, 201, s.text);
    }
  });
  after(() => t.close());

  const allMetrics = (): Metric[] => [
    { agg: 'count' },
    { agg: 'error_rate' },
    { field: 'cost', agg: 'sum' },
    { field: 'latency', agg: 'avg' },
    { field: 'latency', agg: 'min' },
    { field: 'latency', agg: 'max' },
    { field: 'latency', agg: 'p50' },
    { field: 'latency', agg: 'p90' },
    { field: 'latency', agg: 'p95' },
    { field: 'latency', agg: 'p99' },
    { field: 'time_to_first_token', agg: 'p95' },
    { field: 'time_to_first_token', agg: 'count' },
    { field: 'prompt_tokens', agg: 'sum' },
    { field: scoreField, agg: 'avg' },
    { field: scoreField, agg: 'p50' },
  ];

  function checkPoints(points: unknown[][], group: Seeded[], starts: number[], metrics: Metric[], what: string) {
    assert.equal(points.length, starts.length, `${what}: one point per bucket`);
    starts.forEach((_, i) => {
      const inside = inBucket(group, starts, i);
      metrics.forEach((m, j) =>
        assertClose(points[i][j], reference(inside, m, scoreField), `${what} bucket ${i} ${m.field ?? ''} ${m.agg}`),
      );
    });
  }

  /** Each top model's series, then "other": its values (percentiles too) of its own logs, not its models' average. */
  function checkModelSeries(series: { points: unknown[][] }[], top: string[], starts: number[], metrics: Metric[]) {
    top.forEach((model, k) =>
      checkPoints(
        series[k].points,
        logs.filter((l) => l.model === model),
        starts,
        metrics,
        model,
      ),
    );
    const others = logs.filter((l) => !top.includes(l.model));
    checkPoints(series[top.length].points, others, starts, metrics, 'other');
  }

  it('answers daily buckets from local midnight in America/New_York across the end of DST', async () => {
    const metrics = allMetrics();
    const res = await summary({ start_time: START, end_time: END, bucket: '1d', tz: 'America/New_York', metrics });
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
    checkPoints(res.body.series[0].points, logs, ms, metrics, 'daily');
    checkPoints(res.body.totals.points, logs, ms, metrics, 'totals');
    metrics.forEach((m, j) => assertClose(res.body.totals.values[j], reference(logs, m, scoreField), `total ${m.agg}`));
    assert.equal(res.body.totals.values[0], 400, 'the test-key log is out of the production scope');
  });

  it('makes every hour bucket one hour when clocks go back or forward; days follow local midnight', async () => {
    const metrics: Metric[] = [{ agg: 'count' }, { field: 'latency', agg: 'p90' }, { field: 'cost', agg: 'max' }];
    const back = await summary({
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
    const inRange = logs.filter((l) => l.ts >= Date.parse(starts[0]) && l.ts <= Date.parse('2026-11-01T09:00:00Z'));
    checkPoints(
      back.body.series[0].points,
      inRange,
      starts.map((s) => Date.parse(s)),
      metrics,
      'hourly',
    );
    assert.ok(back.body.series[0].points[2][0] > 0, 'the first 1:00 holds logs');
    assert.ok(back.body.series[0].points[3][0] > 0, 'the second 1:00 holds logs');

    const forward = await summary({
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
    const days = await summary({
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
    const weeks = await summary({
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
      logs.filter((l) => l.ts < Date.parse('2026-11-02T05:00:00Z')).length,
    );
    const kathmandu = await summary({
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

  it('groups by model: the top groups by count, the rest as one "other" series', async () => {
    const metrics: Metric[] = [{ agg: 'count' }, { field: 'cost', agg: 'sum' }, { field: 'latency', agg: 'p95' }];
    const res = await summary({
      start_time: START,
      end_time: END,
      bucket: '1d',
      metrics,
      group_by: ['model'],
      limit: 3,
    });
    assert.equal(res.status, 200, res.text);
    const counts = MODELS.map((m) => ({ m, n: logs.filter((l) => l.model === m).length })).sort(
      (x, y) => y.n - x.n || (x.m < y.m ? -1 : 1),
    );
    const top = counts.slice(0, 3).map((c) => c.m);
    assert.deepEqual(
      res.body.series.map((s: { group: unknown; other: boolean }) => [s.group, s.other]),
      [...top.map((m) => [{ model: m }, false]), [{}, true]],
    );
    const starts = res.body.buckets.map((b: string) => Date.parse(b));
    assert.equal(starts[0], Date.parse('2026-10-29T00:00:00Z'), 'UTC days by default');
    checkModelSeries(res.body.series, top, starts, metrics);
  });

  it('answers metrics without percentiles (all of which add up) per bucket, per group and in total', async () => {
    const metrics = allMetrics().filter((m) => !['p50', 'p90', 'p95', 'p99'].includes(m.agg));
    const res = await summary({
      start_time: START,
      end_time: END,
      bucket: '1d',
      metrics,
      group_by: ['model'],
      limit: 2,
    });
    assert.equal(res.status, 200, res.text);
    const starts = res.body.buckets.map((b: string) => Date.parse(b));
    checkPoints(res.body.totals.points, logs, starts, metrics, 'totals');
    metrics.forEach((m, j) => assertClose(res.body.totals.values[j], reference(logs, m, scoreField), `total ${m.agg}`));
    const top = res.body.series
      .filter((s: { other: boolean }) => !s.other)
      .map((s: { group: { model: string } }) => s.group.model);
    assert.equal(top.length, 2);
    checkModelSeries(res.body.series, top, starts, metrics);
  });

  it('groups by a number field: each status code its series, with its own logs’ metrics', async () => {
    const metrics: Metric[] = [{ agg: 'count' }, { field: 'latency', agg: 'p50' }];
    for (const filters of [undefined, { model: { value: [MODELS[0]] } }]) {
      const res = await summary({
        start_time: START,
        end_time: END,
        bucket: '1d',
        metrics,
        group_by: ['status_code'],
        filters,
      });
      assert.equal(res.status, 200, res.text);
      const scoped = filters ? logs.filter((l) => l.model === MODELS[0]) : logs;
      const failed = scoped.filter((l) => l.failed);
      const ok = scoped.filter((l) => !l.failed);
      const [first, second] = ok.length >= failed.length ? [ok, failed] : [failed, ok];
      assert.deepEqual(
        res.body.series.map((s: { group: unknown }) => s.group),
        [{ status_code: first === ok ? 200 : 500 }, { status_code: first === ok ? 500 : 200 }],
      );
      const starts = res.body.buckets.map((b: string) => Date.parse(b));
      checkPoints(res.body.series[0].points, first, starts, metrics, 'first status');
      checkPoints(res.body.series[1].points, second, starts, metrics, 'second status');
    }
  });

  it('groups by two fields, an absent metadata key as a null group, with the list’s filters', async () => {
    const metrics: Metric[] = [{ agg: 'count' }, { field: 'latency', agg: 'p50' }, { agg: 'error_rate' }];
    const res = await summary({
      start_time: START,
      end_time: END,
      bucket: '1d',
      metrics,
      group_by: ['customer_identifier', 'metadata__feature'],
      filters: { model: { operator: 'in', value: ['model-a', 'model-b'] } },
      limit: 100,
    });
    assert.equal(res.status, 200, res.text);
    const matching = logs.filter((l) => l.model === 'model-a' || l.model === 'model-b');
    const starts = res.body.buckets.map((b: string) => Date.parse(b));
    assert.equal(res.body.series.length, 9, '3 customers × (x, y, none)');
    let seen = 0;
    for (const s of res.body.series) {
      assert.equal(s.other, false);
      const group = matching.filter(
        (l) => l.customer === s.group.customer_identifier && l.feature === s.group.metadata__feature,
      );
      seen += group.length;
      checkPoints(s.points, group, starts, metrics, JSON.stringify(s.group));
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
    const test = await summary({ ...body, is_test: true });
    assert.deepEqual(test.body.totals.values, [5, 1], 'only the test-key log');
    const all = await summary({ ...body, all_envs: true });
    assert.equal(all.body.totals.values[1], 401);
    assert.equal((await summary({ ...body, all_envs: true, is_test: false })).body.totals.values[1], 400);
    const prod = await summary({ ...body, all_envs: true, environment: 'prod' });
    assert.equal(prod.body.totals.values[1], 400);
    const testEnv = await summary({ ...body, all_envs: true, environment: 'test' });
    assert.deepEqual(testEnv.body.totals.values, [5, 1]);
    const none = await summary({ ...body, environment: 'staging' });
    assert.equal(none.body.totals.values[1], 0);
  });

  it('picks between 30 and 120 buckets for auto', async () => {
    const end = Date.parse(END);
    for (const hours of [1, 6, 24, 24 * 7, 24 * 30, 24 * 365]) {
      const res = await summary({ start_time: new Date(end - hours * 3_600_000).toISOString(), end_time: END });
      assert.equal(res.status, 200, res.text);
      const n = res.body.buckets.length;
      assert.ok(n >= 30 && n <= 120, `${hours} h: ${n} buckets of ${res.body.bucket}`);
    }
  });

  it('takes error_rate with a field, as every metric is shaped, and ignores the field', async () => {
    const body = { start_time: START, end_time: END, bucket: '1d' };
    const plain = await summary({ ...body, metrics: [{ agg: 'error_rate' }] });
    const withField = await summary({ ...body, metrics: [{ field: 'latency', agg: 'error_rate' }] });
    assert.equal(withField.status, 200, withField.text);
    assert.deepEqual(withField.body.metrics, [{ field: null, agg: 'error_rate' }]);
    assert.deepEqual(withField.body.totals, plain.body.totals);
    assertClose(withField.body.totals.values[0], reference(logs, { agg: 'error_rate' }, scoreField), 'error rate');
  });

  it('answers the largest summary the bounds allow: 120 buckets × 101 series × 20 metrics', async () => {
    const res = await summary({
      start_time: START,
      end_time: END,
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
      const res = await summary(body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.error.param, param, JSON.stringify(body));
    }
    const anonymous = await api(t.baseUrl, 'POST', '/api/request-logs/summary/', { body: {} });
    assert.equal(anonymous.status, 401);
  });
});
