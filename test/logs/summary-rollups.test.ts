/**
 * Summaries read from the rollups against the same summaries read from the logs (`exact: true`, held to a
 * reference in request-log-summary.test.ts), over the seeded logs: the same buckets and series, counts
 * and sums equal, percentiles, min and max within the relative error the answer states — for day and
 * hour buckets, zones whose days and hours are not UTC's, ends inside a minute, groups and filters, and by
 * customer from the customer rollups; and the summaries the rollups cannot answer read from the logs. On
 * the database GATELOG_TEST_DB names.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { api } from '../support/harness.js';
import { END, type Metric, MODELS, seededSummarySuite, START } from '../support/seeded-summary.js';

const PERCENTILE_AGGS = new Set(['min', 'max', 'p50', 'p90', 'p95', 'p99']);

const METRICS: Metric[] = [
  { agg: 'count' },
  { agg: 'error_rate' },
  { field: 'cost', agg: 'sum' },
  { field: 'latency', agg: 'avg' },
  { field: 'latency', agg: 'min' },
  { field: 'latency', agg: 'max' },
  { field: 'latency', agg: 'p50' },
  { field: 'latency', agg: 'p99' },
  { field: 'time_to_first_token', agg: 'p95' },
  { field: 'time_to_first_token', agg: 'count' },
  { field: 'prompt_tokens', agg: 'sum' },
];

type Answer = {
  buckets: string[];
  series: { group: unknown; other: boolean; points: (number | null)[][] }[];
  totals: { values: (number | null)[]; points: (number | null)[][] };
  source: string;
  approximate: boolean;
  relative_error: number | null;
};

function sameValue(rolled: number | null, exact: number | null, metric: Metric, error: number, what: string) {
  if (exact === null) return assert.equal(rolled, null, what);
  assert.equal(typeof rolled, 'number', `${what}: ${rolled}`);
  const tolerance = PERCENTILE_AGGS.has(metric.agg) ? error * Math.abs(exact) : 1e-9 * Math.max(1, Math.abs(exact));
  assert.ok(Math.abs(rolled! - exact) <= tolerance + 1e-12, `${what}: ${rolled} against ${exact} read from the logs`);
}

function sameAnswer(rolled: Answer, exact: Answer, metrics: Metric[], what: string) {
  assert.equal(rolled.source, 'rollups', `${what}: read from the rollups`);
  assert.equal(exact.source, 'logs');
  const sketched = metrics.some((m) => m.field !== undefined && PERCENTILE_AGGS.has(m.agg));
  assert.equal(rolled.approximate, sketched, `${what}: approximate only with values from sketches`);
  assert.equal(rolled.relative_error, sketched ? 0.01 : null);
  assert.equal(exact.approximate, false);
  assert.deepEqual(rolled.buckets, exact.buckets, `${what}: buckets`);
  assert.deepEqual(
    rolled.series.map((s) => [s.group, s.other]),
    exact.series.map((s) => [s.group, s.other]),
    `${what}: series`,
  );
  const error = rolled.relative_error ?? 0;
  const points = (a: (number | null)[][], b: (number | null)[][], where: string) =>
    a.forEach((point, i) =>
      point.forEach((v, j) => sameValue(v, b[i][j], metrics[j], error, `${what} ${where} bucket ${i} metric ${j}`)),
    );
  rolled.series.forEach((s, k) => points(s.points, exact.series[k].points, `series ${k}`));
  points(rolled.totals.points, exact.totals.points, 'totals');
  rolled.totals.values.forEach((v, j) => sameValue(v, exact.totals.values[j], metrics[j], error, `${what} total ${j}`));
}

describe('summaries from the rollups', () => {
  const seeded = seededSummarySuite();
  const both = async (body: Record<string, unknown>) => {
    const full = { start_time: START, end_time: END, ...body };
    // exact: false — the rollups wherever they can answer (left to itself, gatelog reads these few logs).
    const [rolled, exact] = await Promise.all([
      seeded.summary({ ...full, exact: false }),
      seeded.summary({ ...full, exact: true }),
    ]);
    assert.equal(rolled.status, 200, rolled.text);
    assert.equal(exact.status, 200, exact.text);
    return [rolled.body as Answer, exact.body as Answer] as const;
  };

  it('answers day, hour and auto buckets by model as the logs do, percentiles within 1 %', async () => {
    for (const bucket of ['1d', '1h', 'auto']) {
      const [rolled, exact] = await both({ bucket, metrics: METRICS, group_by: ['model'], limit: 3 });
      sameAnswer(rolled, exact, METRICS, `bucket ${bucket}`);
    }
  });

  it('answers days of a zone that is not UTC, across the end of DST, and hours of a zone off by 45 minutes', async () => {
    for (const [tz, bucket] of [
      ['America/New_York', '1d'],
      ['America/New_York', '6h'],
      ['Asia/Kathmandu', '1h'],
    ]) {
      const [rolled, exact] = await both({ bucket, tz, metrics: METRICS, group_by: ['status_code'] });
      sameAnswer(rolled, exact, METRICS, `${tz} ${bucket}`);
    }
  });

  it('reads the logs of ends inside a minute, and answers two groups and filters on dimensions', async () => {
    const metrics: Metric[] = [{ agg: 'count' }, { field: 'latency', agg: 'p95' }, { field: 'cost', agg: 'avg' }];
    const [rolled, exact] = await both({
      start_time: '2026-10-29T03:17:41.250Z',
      end_time: '2026-11-03T21:02:09.900Z',
      bucket: '1h',
      metrics,
      group_by: ['model', 'status'],
      filters: { model: { operator: 'in', value: MODELS.slice(0, 3) } },
    });
    sameAnswer(rolled, exact, metrics, 'odd ends');
  });

  it('answers a summary by customer from the customer rollups, counts and sums exactly', async () => {
    const metrics: Metric[] = [
      { agg: 'count' },
      { agg: 'error_rate' },
      { field: 'cost', agg: 'sum' },
      { field: 'latency', agg: 'sum' },
      { field: 'latency', agg: 'count' },
      { field: 'prompt_tokens', agg: 'sum' },
      { field: 'time_to_first_token', agg: 'avg' },
    ];
    const asks: [string, Record<string, unknown>][] = [
      ['days', { bucket: '1d' }],
      ['hours, two top customers and the others', { bucket: '1h', limit: 2 }],
      ['auto, ends inside an hour', { start_time: '2026-10-29T03:17:41.250Z', end_time: '2026-11-03T21:02:09.900Z' }],
      ['days in New York across the end of DST', { bucket: '1d', tz: 'America/New_York' }],
      [
        'model calls only, as the dashboard asks',
        { filters: { log_type: { operator: 'in', value: ['chat', 'embedding'] } } },
      ],
      ['one customer', { bucket: '6h', filters: { customer_identifier: { value: ['c2'] } } }],
      ['every environment', { bucket: '1d', all_envs: true, limit: 1 }],
    ];
    for (const [what, body] of asks) {
      const [rolled, exact] = await both({ metrics, group_by: ['customer_identifier'], ...body });
      sameAnswer(rolled, exact, metrics, what);
    }
  });

  it('reads the logs for what the rollups do not hold, and when asked to', async () => {
    const logsOnly: [string, Record<string, unknown>][] = [
      ['exact', { exact: true }],
      ['a few logs to a rollup row, left to gatelog', { exact: null }],
      ['a short range', { start_time: '2026-10-30T00:00:00Z', end_time: '2026-10-30T05:00:00Z' }],
      [
        'a customer group and a model filter',
        { group_by: ['customer_identifier'], filters: { model: { value: ['model-a'] } } },
      ],
      [
        'a customer group and a percentile',
        { group_by: ['customer_identifier'], metrics: [{ field: 'latency', agg: 'p50' }] },
      ],
      [
        'a customer group by 15 minutes',
        { group_by: ['customer_identifier'], bucket: '15m', end_time: '2026-10-31T00:00:00Z' },
      ],
      ['a customer group with a model group', { group_by: ['customer_identifier', 'model'] }],
      ['a metadata group', { group_by: ['metadata__feature'] }],
      ['a metadata filter', { filters: { metadata__feature: { value: ['x'] } } }],
      ['a score', { metrics: [{ field: seeded.scoreField, agg: 'avg' }] }],
      ['a cost percentile', { metrics: [{ field: 'cost', agg: 'p90' }] }],
    ];
    for (const [what, body] of logsOnly) {
      const res = await seeded.summary({ start_time: START, end_time: END, bucket: '1d', exact: false, ...body });
      assert.equal(res.status, 200, `${what}: ${res.text}`);
      assert.equal(res.body.source, 'logs', what);
      assert.equal(res.body.approximate, false, what);
    }
  });

  it('left to gatelog, reads the rollups where their rows stand for 10 logs or more each', async () => {
    const dense = await seeded.t.tenant();
    const from = Date.parse('2026-10-10T00:00:00Z');
    // 12 logs an hour for 8 hours, of one model and outcome: each hour row stands for 12 logs.
    const logs = Array.from({ length: 96 }, (_, i) => ({
      model: 'gpt-4o',
      status_code: 200,
      latency: 0.1 + (i % 12) * 0.05,
      prompt_tokens: 5,
      completion_tokens: 5,
      input: [{ role: 'user', content: `q ${i}` }],
      output: { role: 'assistant', content: `a ${i}` },
      timestamp: new Date(from + Math.floor(i / 12) * 3_600_000 + (i % 12) * 240_000).toISOString(),
    }));
    const res = await api(seeded.t.baseUrl, 'POST', '/api/request-logs/batch/', { key: dense.key, body: logs });
    assert.equal(res.status, 201, res.text);
    await seeded.t.flush();
    const metrics: Metric[] = [{ agg: 'count' }, { field: 'latency', agg: 'p50' }];
    const ask = async (exact: boolean | undefined) => {
      const body = {
        start_time: '2026-10-10T00:00:00Z',
        end_time: '2026-10-10T07:59:59.999Z',
        bucket: '1h',
        metrics,
        ...(exact === undefined ? {} : { exact }),
      };
      const answer = await api(seeded.t.baseUrl, 'POST', '/api/request-logs/summary/', { key: dense.key, body });
      assert.equal(answer.status, 200, answer.text);
      return answer.body as Answer;
    };
    const [left, exact] = await Promise.all([ask(undefined), ask(true)]);
    assert.equal(left.totals.values[0], 96);
    sameAnswer(left, exact, metrics, 'dense rows left to gatelog');
  });

  it('refuses an exact that is not true or false, naming it', async () => {
    const res = await api(seeded.t.baseUrl, 'POST', '/api/request-logs/summary/', {
      key: seeded.a.key,
      body: { exact: 'yes' },
    });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.param, 'exact');
  });
});
