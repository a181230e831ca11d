/**
 * Differential test of the dataset-log list: a seeded random dataset (copies of random logs, logs
 * written by hand, random annotations), seeded random filter/sort/page queries, and the second
 * reference model (support/dataset-reference.ts). Count and the ordered page of ids must match exactly.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';
import { type Condition, type DatasetItem, type DatasetQuery, datasetReference } from '../support/dataset-reference.js';
import { rng } from '../support/rng.js';
import { METADATA_OPERATORS, NUMBER_OPERATORS, TEXT_OPERATORS } from '../support/reference.js';

const SEED = Number(process.env.GATELOG_DIFF_SEED ?? 20261123);
const QUERIES = 300;

const MODELS = ['gpt-4o', 'GPT-4o', 'gpt-4o-mini', 'Claude_3%', 'o1\\preview', 'Émile'];
const STATUSES = ['pending', 'completed', 'Completed', 'needs review', 'skip_me'];
const TOPICS = ['billing', 'Billing', 'bill%ing', 'refunds', 'ré'];
const SCORES = [1, 2, '3', true, 2.5];
const OPS: Record<string, string[]> = { text: TEXT_OPERATORS, number: NUMBER_OPERATORS, meta: METADATA_OPERATORS };
const FIELDS: Record<string, keyof typeof OPS> = {
  model: 'text',
  status: 'text',
  environment: 'text',
  annotation_status: 'text',
  log_type: 'text',
  status_code: 'number',
  prompt_tokens: 'number',
  completion_tokens: 'number',
  total_request_tokens: 'number',
  cost: 'number',
  latency: 'number',
  timestamp: 'number',
  start_time: 'number',
  metadata__topic: 'meta',
  metadata__score: 'meta',
  metadata__missing: 'meta',
};
const ORDER = ['unique_id', 'timestamp', 'start_time', 'cost', 'latency', 'prompt_tokens', 'completion_tokens'];
ORDER.push('total_request_tokens', 'status_code', 'model', 'annotation_status');

describe('dataset-log list: differential test against a second reference model', () => {
  let t: TestApp;
  let a: Tenant;
  let dataset: string;
  let items: DatasetItem[] = [];
  const r = rng(SEED);
  const now = Date.now();
  const call = (method: string, path: string, body?: unknown) => api(t.baseUrl, method, path, { key: a.key, body });

  before(async () => {
    t = await startApp();
    a = await t.tenant();
    const metadata = () => {
      const m: Record<string, unknown> = {};
      if (r.next() < 0.6) m.topic = r.pick(TOPICS);
      if (r.next() < 0.5) m.score = r.pick(SCORES);
      return m;
    };
    const logs = Array.from({ length: 150 }, () => ({
      model: r.pick(MODELS),
      log_type: r.pick(['chat', 'chat', 'embedding', 'text']),
      status_code: r.pick([200, 200, 201, 400, 500]),
      environment: r.pick(['prod', 'staging']),
      cost: r.next() < 0.2 ? 0 : Math.round(r.next() * 1000) / 10000,
      latency: r.int(0, 40) / 10,
      prompt_tokens: r.int(0, 50),
      completion_tokens: r.int(0, 50),
      timestamp: new Date(now - r.int(0, 50) * 60_000 - r.int(0, 59_000)).toISOString(),
      metadata: metadata(),
    }));
    await call('POST', '/api/request-logs/batch/', { logs });
    dataset = (
      await call('POST', '/api/datasets/', { name: 'diff', start_time: new Date(now - 3600_000).toISOString() })
    ).body.id;
    for (let i = 0; i < 30; i++) {
      await call('POST', `/api/datasets/${dataset}/logs/`, {
        input: [{ role: 'user', content: `q${i}` }],
        output: 'a',
        model: r.pick(MODELS),
        metadata: metadata(),
        metrics: {
          prompt_tokens: r.int(0, 50),
          completion_tokens: r.int(0, 50),
          cost: r.int(0, 9) / 100,
          latency: r.int(0, 40) / 10,
        },
      });
    }
    const all = async () =>
      (await call('GET', `/api/datasets/${dataset}/logs/list/?page_size=1000`)).body.results as DatasetItem[];
    for (const item of await all()) {
      if (r.next() < 0.5)
        await call('PATCH', `/api/datasets/${dataset}/logs/${item.id}/`, { annotation_status: r.pick(STATUSES) });
    }
    items = await all();
    assert.equal(items.length, 180);
  });
  after(() => t.close());

  function sample(field: string, operator: string): unknown {
    const kind = FIELDS[field];
    if (kind === 'meta') {
      if (['lt', 'lte', 'gt', 'gte'].includes(operator)) return r.pick([1, 2, 2.5, '3', 0]);
      const v = r.pick([...TOPICS, '1', '2', '3', 'true', '2.5', 'BILL', '%', '_']);
      return operator.endsWith('contains') && r.next() < 0.5 ? v.slice(0, 2) : v;
    }
    const item = r.pick(items);
    if (kind === 'text' && ['contains', 'icontains', 'startswith', 'endswith'].includes(operator)) {
      return r.pick(['gpt', 'GPT', '4o', '%', '_3', '\\', 'é', 'É', 'comp', 'pend', 'ro', '']);
    }
    const v = item[field];
    if (v === null || v === undefined) return 1;
    if (typeof v === 'number' && field !== 'cost' && field !== 'latency' && r.next() < 0.3) return String(v);
    return v;
  }

  function condition(field: string, operator: string): Condition {
    let values: unknown[];
    if (operator === 'isnull') values = [r.next() < 0.5];
    else if (['lt', 'lte', 'gt', 'gte'].includes(operator)) values = [sample(field, operator)];
    else values = Array.from({ length: r.int(1, 3) }, () => sample(field, operator));
    return { field, operator, values };
  }

  it(`matches the reference on ${QUERIES} random queries (seed ${SEED})`, async () => {
    const names = Object.keys(FIELDS);
    for (let n = 0; n < QUERIES; n++) {
      const body = new Map<string, Condition>();
      for (let i = r.int(0, 3); i > 0; i--) {
        const field = r.pick(names);
        body.set(field, condition(field, r.pick(OPS[FIELDS[field]])));
      }
      const url = new Map<string, Condition & { connector: 'AND' | 'OR' }>();
      for (let i = r.pick([0, 0, 1, 2]); i > 0; i--) {
        const field = r.pick(names.filter((f) => f !== 'timestamp' && f !== 'start_time'));
        const c = condition(field, r.pick(['', '', 'not']));
        url.set(field, { ...c, values: [String(c.values[0])], connector: r.pick(['AND', 'OR']) });
      }
      const q: DatasetQuery = {
        body: [...body.values()],
        url: [...url.values()],
        orderBy: `${r.next() < 0.5 ? '-' : ''}${r.pick(ORDER)}`,
        page: r.pick([1, 1, 2, 3]),
        pageSize: r.pick([5, 20, 100]),
      };
      const params = new URLSearchParams({
        [r.next() < 0.5 ? 'order_by' : 'sort_by']: q.orderBy,
        page: String(q.page),
        page_size: String(q.pageSize),
      });
      for (const c of q.url) {
        params.append(`${c.field}[value]`, String(c.values[0]));
        if (c.operator !== '') params.append(`${c.field}[operator]`, c.operator);
        params.append(`${c.field}[connector]`, c.connector);
      }
      const filters = Object.fromEntries(q.body.map((c) => [c.field, { operator: c.operator, value: c.values }]));
      const res = await call('POST', `/api/datasets/${dataset}/logs/list/?${params}`, { filters });
      const context = `query ${n}: ${params} ${JSON.stringify(filters)}`;
      assert.equal(res.status, 200, `${context}\n${res.text}`);
      const expected = datasetReference(items, q);
      assert.equal(res.body.count, expected.count, context);
      assert.deepEqual(
        res.body.results.map((i: DatasetItem) => i.id),
        expected.ids,
        context,
      );
    }
  });
});
