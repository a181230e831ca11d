/**
 * Dataset routes' rules (docs/api.md "Datasets", "Dataset logs"): 401 and cross-organization 404 on every
 * route, 400s naming the parameter, bulk adding and removing, scores, sorting and filter_options.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';

describe('dataset routes', () => {
  let t: TestApp;
  let a: Tenant;
  let dataset: string;
  let logId: string;
  let sourceIds: string[];
  /** key null: no Authorization header. */
  const call = (method: string, path: string, body?: unknown, key: string | null = a.key) =>
    api(t.baseUrl, method, path, { key: key ?? undefined, body });
  const at = (msAgo: number) => new Date(Date.now() - msAgo).toISOString();

  before(async () => {
    t = await startApp();
    a = await t.tenant();
    const evaluator = await call('POST', '/api/evaluators/', { name: 'quality' });
    const models = ['b-model', 'a-model', 'c-model', 'a-model', 'b-model', 'a-model'];
    const logs = models.map((model, i) => ({
      model,
      status_code: i === 2 ? 500 : 200,
      prompt_tokens: (i * 7) % 5,
      completion_tokens: i,
      cost: ((i * 3) % 4) / 10,
      latency: (5 - i) / 2,
      timestamp: at(60_000 - i * 1000),
      metadata: { parity: i % 2 === 0 ? 'even' : 'odd' },
    }));
    const res = await call('POST', '/api/request-logs/batch/', { logs });
    sourceIds = res.body.unique_ids;
    await call('POST', `/api/logs/${sourceIds[0]}/scores/`, { evaluator_id: evaluator.body.id, numerical_value: 4 });
    const ds = await call('POST', '/api/datasets/', { name: 'rules', start_time: at(3600_000) });
    dataset = ds.body.id;
    assert.equal(ds.body.log_count, 6);
    const list = await call('GET', `/api/datasets/${dataset}/logs/list/?order_by=timestamp`);
    logId = list.body.results[0].id;
  });
  after(() => t.close());

  const routes = () =>
    [
      ['GET', `/api/datasets/${dataset}/`],
      ['PATCH', `/api/datasets/${dataset}/`, { name: 'x' }],
      ['DELETE', `/api/datasets/${dataset}/`],
      ['POST', `/api/datasets/${dataset}/logs/`, { log_ids: sourceIds.slice(0, 1) }],
      ['POST', `/api/datasets/${dataset}/logs/bulk/`, { start_time: at(3600_000), end_time: at(0) }],
      ['DELETE', `/api/datasets/${dataset}/logs/delete/`, { is_deleting_all_logs: true }],
      ['GET', `/api/datasets/${dataset}/logs/list/`],
      ['POST', `/api/datasets/${dataset}/logs/list/`, { filters: {} }],
      ['GET', `/api/datasets/${dataset}/logs/${logId}/`],
      ['PATCH', `/api/datasets/${dataset}/logs/${logId}/`, { annotation_status: 'x' }],
      ['DELETE', `/api/datasets/${dataset}/logs/${logId}/`],
      ['POST', `/api/datasets/${dataset}/logs/${logId}/scores/`, { evaluator_slug: 'quality', numerical_value: 1 }],
    ] as [string, string, unknown?][];

  it('answers 401 without a valid key on every dataset route', async () => {
    for (const [method, path, body] of [
      ...routes(),
      ['POST', '/api/datasets/', { name: 'x' }],
      ['GET', '/api/datasets/'],
      ['GET', '/api/datasets/list/'],
    ] as [string, string, unknown?][]) {
      for (const key of [null, 'gl-not-a-key']) {
        const res = await call(method, path, body, key);
        assert.equal(res.status, 401, `${method} ${path}`);
      }
    }
  });

  it("answers 404 on every route for another organization's dataset, and changes nothing", async () => {
    const b = await t.tenant();
    for (const [method, path, body] of routes()) {
      const res = await call(method, path, body, b.key);
      assert.equal(res.status, 404, `${method} ${path}: ${res.text}`);
      assert.equal(res.body.error.type, 'not_found_error');
    }
    const other = await call('GET', '/api/datasets/', undefined, b.key);
    assert.equal(other.body.count, 0);
    const mine = await call('GET', `/api/datasets/${dataset}/`);
    assert.equal(mine.body.name, 'rules');
    assert.equal(mine.body.log_count, 6);
    const missing = await call('GET', `/api/datasets/${crypto.randomUUID()}/logs/list/`);
    assert.equal(missing.status, 404);
    assert.equal((await call('GET', `/api/datasets/${dataset}/logs/999999999/`)).status, 404);
    assert.equal((await call('GET', `/api/datasets/${dataset}/logs/not-a-number/`)).status, 404);
  });

  it('answers 400 naming the parameter', async () => {
    const cases: [string, string, unknown, string][] = [
      ['POST', '/api/datasets/', {}, 'name'],
      ['POST', '/api/datasets/', { name: 'x', sampling: 101 }, 'sampling'],
      ['POST', '/api/datasets/', { name: 'x', start_time: 'yesterday' }, 'start_time'],
      ['POST', '/api/datasets/', { name: 'x', sampling: 50 }, 'sampling'],
      ['POST', '/api/datasets/', { name: 'x', start_time: at(0), end_time: at(1000) }, 'start_time'],
      [
        'POST',
        '/api/datasets/',
        { name: 'x', start_time: at(1000), initial_log_filters: { nope: { value: [1] } } },
        'initial_log_filters.nope',
      ],
      ['POST', '/api/datasets/', { name: 'x', colour: 'red' }, 'colour'],
      ['PATCH', `/api/datasets/${dataset}/`, { log_count: 3 }, 'log_count'],
      ['POST', `/api/datasets/${dataset}/logs/`, { log_ids: [] }, 'log_ids'],
      ['POST', `/api/datasets/${dataset}/logs/`, { log_ids: 'abc' }, 'log_ids'],
      ['POST', `/api/datasets/${dataset}/logs/`, { input: 'q', output: 'a', metrics: { cost: -1 } }, 'metrics.cost'],
      ['POST', `/api/datasets/${dataset}/logs/bulk/`, { end_time: at(0) }, 'start_time'],
      [
        'POST',
        `/api/datasets/${dataset}/logs/bulk/`,
        { start_time: at(9), end_time: at(0), sampling_percentage: -1 },
        'sampling_percentage',
      ],
      ['DELETE', `/api/datasets/${dataset}/logs/delete/`, {}, 'filters'],
      ['DELETE', `/api/datasets/${dataset}/logs/delete/`, { filters: { bogus: { value: [1] } } }, 'filters.bogus'],
      ['PATCH', `/api/datasets/${dataset}/logs/${logId}/`, { annotation_status: '' }, 'annotation_status'],
      ['GET', `/api/datasets/${dataset}/logs/list/?order_by=prompt`, undefined, 'order_by'],
      ['GET', `/api/datasets/${dataset}/logs/list/?sort_by=-nope`, undefined, 'sort_by'],
      ['GET', `/api/datasets/${dataset}/logs/list/?order_by=cost&sort_by=cost`, undefined, 'sort_by'],
      ['GET', `/api/datasets/${dataset}/logs/list/?page_size=0`, undefined, 'page_size'],
      [
        'POST',
        `/api/datasets/${dataset}/logs/list/`,
        { filters: { cost: { operator: 'contains', value: [1] } } },
        'filters.cost.operator',
      ],
    ];
    for (const [method, path, body, param] of cases) {
      const res = await call(method, path, body);
      assert.equal(res.status, 400, `${method} ${path} ${JSON.stringify(body)}: ${res.text}`);
      assert.equal(res.body.error.param, param, `${method} ${path} ${JSON.stringify(body)}: ${res.text}`);
    }
    assert.equal((await call('GET', `/api/datasets/${dataset}/`)).body.log_count, 6);
  });

  it('sorts by every allowed field in both directions, ties by id the same way', async () => {
    const fields = ['unique_id', 'timestamp', 'start_time', 'cost', 'latency', 'prompt_tokens', 'completion_tokens'];
    fields.push('total_request_tokens', 'status_code', 'model', 'annotation_status');
    const all = (await call('GET', `/api/datasets/${dataset}/logs/list/`)).body.results as Record<string, unknown>[];
    assert.equal(all.length, 6);
    const key = (item: Record<string, unknown>, field: string) => {
      const v = item[field === 'unique_id' ? 'id' : field];
      if (field === 'unique_id') return Number(v);
      return field === 'timestamp' || field === 'start_time' ? Date.parse(v as string) : v;
    };
    for (const field of fields) {
      for (const desc of [false, true]) {
        for (const param of ['order_by', 'sort_by']) {
          const res = await call('GET', `/api/datasets/${dataset}/logs/list/?${param}=${desc ? '-' : ''}${field}`);
          assert.equal(res.status, 200, res.text);
          const expected = [...all].sort((x, y) => {
            const [p, q] = [key(x, field), key(y, field)] as [number | string, number | string];
            const c = p < q ? -1 : p > q ? 1 : Number(x.id) - Number(y.id);
            return desc ? -c : c;
          });
          assert.deepEqual(
            res.body.results.map((r: { id: string }) => r.id),
            expected.map((r) => r.id),
            `${param}=${desc ? '-' : ''}${field}`,
          );
        }
      }
    }
  });

  it('filters with URL and body filters; filter_options counts the whole dataset', async () => {
    const byModel = await call('GET', `/api/datasets/${dataset}/logs/list/?model=a-model&page_size=2`);
    assert.equal(byModel.body.count, 3);
    assert.equal(byModel.body.results.length, 2);
    assert.ok(byModel.body.next);
    const options = byModel.body.filter_options;
    const models = options.model.value_choices.map((c: { value: string; count: number }) => [c.value, c.count]);
    assert.deepEqual(models, [
      ['a-model', 3],
      ['b-model', 2],
      ['c-model', 1],
    ]);
    assert.deepEqual(options.metadata__parity.value_choices.map((c: { value: string }) => c.value).sort(), [
      'even',
      'odd',
    ]);
    assert.ok(options.annotation_status);
    const body = await call('POST', `/api/datasets/${dataset}/logs/list/?metadata__parity=even`, {
      filters: { cost: { operator: 'gte', value: [0.2] }, metadata__parity: { value: ['odd'] } },
    });
    const expected = [0, 2, 4].filter((i) => ((i * 3) % 4) / 10 >= 0.2).length;
    assert.equal(body.body.count, expected);
    const failed = await call('GET', `/api/datasets/${dataset}/logs/list/?status_code=500`);
    assert.equal(failed.body.count, 1);
    assert.equal(failed.body.results[0].status, 'error');
  });

  it('copies carry their source scores; dataset logs take scores of their own', async () => {
    const list = await call('GET', `/api/datasets/${dataset}/logs/list/?order_by=timestamp`);
    const first = list.body.results[0];
    assert.equal(first.source_log_unique_id, sourceIds[0]);
    assert.deepEqual(
      first.scores.map((s: { evaluator_slug: string; score_value: number }) => [s.evaluator_slug, s.score_value]),
      [['quality', 4]],
    );
    const second = list.body.results[1];
    const scored = await call('POST', `/api/datasets/${dataset}/logs/${second.id}/scores/`, {
      evaluator_slug: 'quality',
      numerical_value: 2.5,
    });
    assert.equal(scored.status, 201, scored.text);
    const dup = await call('POST', `/api/datasets/${dataset}/logs/${second.id}/scores/`, {
      evaluator_slug: 'quality',
      numerical_value: 1,
    });
    assert.equal(dup.status, 409);
    const read = await call('GET', `/api/datasets/${dataset}/logs/${second.id}/`);
    assert.equal(read.body.scores[0].score_value, 2.5);
    assert.equal(read.body.scores[0].evaluator_name, 'quality');
  });

  it('bulk-adds only logs not yet there, removes by filters or all, and keeps the counts right', async () => {
    const ds = (await call('POST', '/api/datasets/', { name: 'bulk' })).body.id as string;
    const range = { start_time: at(3600_000), end_time: at(0) };
    const first = await call('POST', `/api/datasets/${ds}/logs/bulk/`, {
      ...range,
      filters: { model: { value: ['a-model'] } },
    });
    assert.deepEqual(first.body, { added_count: 3 });
    const second = await call('POST', `/api/datasets/${ds}/logs/bulk/`, range);
    assert.deepEqual(second.body, { added_count: 3 });
    const again = await call('POST', `/api/datasets/${ds}/logs/bulk/`, range);
    assert.deepEqual(again.body, { added_count: 0 });
    assert.equal((await call('GET', `/api/datasets/${ds}/`)).body.log_count, 6);
    const removed = await call('DELETE', `/api/datasets/${ds}/logs/delete/`, {
      filters: { model: { value: ['b-model'] } },
    });
    assert.deepEqual(removed.body, { removed_count: 2 });
    assert.equal((await call('GET', `/api/datasets/${ds}/`)).body.log_count, 4);
    const half = await call('POST', `/api/datasets/${ds}/logs/bulk/`, { ...range, sampling_percentage: 50 });
    assert.deepEqual(half.body, { added_count: 1 }); // round(2 · 0.5)
    const all = await call('DELETE', `/api/datasets/${ds}/logs/delete/`, { is_deleting_all_logs: true });
    assert.deepEqual(all.body, { removed_count: 5 });
    const after = (await call('GET', `/api/datasets/${ds}/`)).body;
    assert.equal(after.log_count, 0);
    assert.equal(after.completed_annotation_count, 0);
  });
});
