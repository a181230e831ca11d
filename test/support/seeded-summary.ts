/**
 * The summary tests' seeded logs and the reference computed from them (for logs/request-log-summary.test.ts
 * and logs/summary-time-buckets.test.ts): 400 logs over a week around the end of DST in New York, a test
 * key's log in the same range, scores of one evaluator; and for each metric the value the summary must
 * answer, computed here from the same logs.
 */
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { createApiKey } from '../../src/auth/api-keys.js';
import { api, startAppWithTenant, type Tenant, type TestApp } from './harness.js';
import { rng } from './rng.js';

export interface Seeded {
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

export const START = '2026-10-29T00:00:00Z';
export const END = '2026-11-04T00:00:00Z';
export const MODELS = ['model-a', 'model-b', 'model-c', 'model-d', 'model-e'];
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

export type Metric = { field?: string; agg: string };

export function reference(logs: Seeded[], metric: Metric, scoreField: string): number | null {
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

export function assertClose(actual: unknown, expected: number | null, what: string) {
  if (expected === null) return assert.equal(actual, null, what);
  assert.equal(typeof actual, 'number', `${what}: ${JSON.stringify(actual)}`);
  const tolerance = 1e-9 * Math.max(1, Math.abs(expected));
  assert.ok(Math.abs((actual as number) - expected) <= tolerance, `${what}: ${actual} ≠ ${expected}`);
}

/** Logs in [starts[i], starts[i+1]) — the last bucket up to the range's end. */
export const inBucket = (logs: Seeded[], starts: number[], i: number) =>
  logs.filter((l) => l.ts >= starts[i] && (i + 1 === starts.length || l.ts < starts[i + 1]));

export const iso = (s: string) => new Date(s).toISOString();

/** An app holding the seeded logs, for the tests of one describe block (see seededSummarySuite). */
export class SeededSummary {
  t!: TestApp;
  a!: Tenant;
  logs!: Seeded[];
  scoreField!: string;

  summary = (body: unknown, key = this.a.key) =>
    api(this.t.baseUrl, 'POST', '/api/request-logs/summary/', { key, body });

  /**
   * A summary over the seeded logs' range (START to END); `body` gives the rest. Read from the logs
   * (`exact`), as the reference computes it; the rollups' answers are held to it in summary-rollups.test.ts.
   */
  summaryOfSeededRange = (body: Record<string, unknown>) =>
    this.summary({ start_time: START, end_time: END, exact: true, ...body });

  async start(): Promise<void> {
    const [t, a] = await startAppWithTenant();
    const logs = seed(400);
    [this.t, this.a, this.logs] = [t, a, logs];
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
    this.scoreField = `scores__${evaluator.body.id}`;
    await t.flush();
    for (const l of logs.filter((x) => x.score !== null)) {
      const s = await api(t.baseUrl, 'POST', `/api/logs/${l.unique_id}/scores/`, {
        key: a.key,
        body: { evaluator_id: evaluator.body.id, numerical_value: l.score },
      });
      assert.equal(s.status, 201, s.text);
    }
  }

  allMetrics(): Metric[] {
    const scoreField = this.scoreField;
    return [
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
  }

  checkPoints(points: unknown[][], group: Seeded[], starts: number[], metrics: Metric[], what: string) {
    assert.equal(points.length, starts.length, `${what}: one point per bucket`);
    starts.forEach((_, i) => {
      const inside = inBucket(group, starts, i);
      metrics.forEach((m, j) =>
        assertClose(
          points[i][j],
          reference(inside, m, this.scoreField),
          `${what} bucket ${i} ${m.field ?? ''} ${m.agg}`,
        ),
      );
    });
  }

  /** Each top model's series, then "other": its values (percentiles too) of its own logs, not its models' average. */
  checkModelSeries(series: { points: unknown[][] }[], top: string[], starts: number[], metrics: Metric[]) {
    top.forEach((model, k) =>
      this.checkPoints(
        series[k].points,
        this.logs.filter((l) => l.model === model),
        starts,
        metrics,
        model,
      ),
    );
    const others = this.logs.filter((l) => !top.includes(l.model));
    this.checkPoints(series[top.length].points, others, starts, metrics, 'other');
  }
}

/** The seeded app of the describe block this is called in: started before its tests, closed after them. */
export function seededSummarySuite(): SeededSummary {
  const s = new SeededSummary();
  before(() => s.start());
  after(() => s.t.close());
  return s;
}
