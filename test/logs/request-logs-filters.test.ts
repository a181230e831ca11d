import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';

describe('request-log list: filters over HTTP, include_fields, fetch_filters', () => {
  let t: TestApp;
  let a: Tenant;
  const list = (query: string, body?: unknown) =>
    api(t.baseUrl, body === undefined ? 'GET' : 'POST', `/api/request-logs/list/${query}`, { key: a.key, body });

  before(async () => {
    t = await startApp();
    a = await t.tenant();
    await api(t.baseUrl, 'POST', '/api/request-logs/batch/', {
      key: a.key,
      body: [
        { model: 'gpt-4o', status_code: 200, cost: 0.5, metadata: { plan: 'pro', tier: 1 }, customer_identifier: 'c1' },
        { model: 'gpt-4o', status_code: 500, cost: 0.1, metadata: { plan: 'free' }, customer_identifier: 'c2' },
        { model: 'gpt-4o-mini', status_code: 200, cost: 0.2, metadata: { plan: 'pro' }, customer_identifier: 'c1' },
        { model: 'text-embedding-3-small', log_type: 'embedding', cost: 0.3, environment: 'staging' },
      ],
    });
    await t.flush();
  });
  after(() => t.close());

  it('lets a URL filter win over a body filter on the same field', async () => {
    const body = { filters: { model: { value: ['gpt-4o-mini'] }, status_code: { value: [200] } } };
    const res = await list('?model=gpt-4o', body);
    assert.equal(res.status, 200);
    assert.equal(res.body.count, 1);
    assert.equal(res.body.results[0].cost, 0.5);
  });

  it('filters on environment and on metadata by bare name', async () => {
    assert.equal((await list('?environment=staging')).body.count, 1);
    assert.equal((await list('?plan=pro')).body.count, 2);
    assert.equal((await list('?plan[value]=pro&plan[operator]=not')).body.count, 2);
  });

  it('returns unique_id and exactly the include_fields', async () => {
    const res = await list('?include_fields=model,cost,prompt_messages&sort_by=cost');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.results[0], {
      unique_id: res.body.results[0].unique_id,
      model: 'gpt-4o',
      cost: 0.1, // the failed call: the cost its caller gave is kept
      prompt_messages: null,
    });
    assert.ok(res.body.results.every((r: object) => Object.keys(r).length === 4));
    const bad = await list('?include_fields=model,secret_sauce');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.param, 'include_fields');
  });

  it('adds filter_options counted over the scope, ignoring the filters', async () => {
    const res = await list('?fetch_filters=true&model=gpt-4o');
    assert.equal(res.body.count, 2);
    const options = res.body.filter_options;
    for (const f of [
      'model',
      'provider_id',
      'customer_identifier',
      'status_code',
      'status',
      'log_type',
      'environment',
      'cost',
      'latency',
      'prompt_tokens',
      'completion_tokens',
      'metadata__plan',
      'metadata__tier',
    ]) {
      assert.ok(options[f], f);
      assert.deepEqual(Object.keys(options[f]).sort(), [
        'display_name',
        'metric',
        'operator_choices',
        'value_choices',
        'value_field_type',
      ]);
    }
    assert.deepEqual(options.model.value_choices, [
      { name: 'gpt-4o', value: 'gpt-4o', count: 2 },
      { name: 'gpt-4o-mini', value: 'gpt-4o-mini', count: 1 },
      { name: 'text-embedding-3-small', value: 'text-embedding-3-small', count: 1 },
    ]);
    assert.equal(options.model.value_field_type, 'selection');
    assert.deepEqual(options.cost.value_choices, []);
    assert.equal(options.cost.value_field_type, 'number');
    assert.deepEqual(options.metadata__plan.value_choices, [
      { name: 'pro', value: 'pro', count: 2 },
      { name: 'free', value: 'free', count: 1 },
    ]);
    assert.ok(options.cost.operator_choices.some((o: { value: string }) => o.value === 'gt'));
    assert.ok(!('filter_options' in (await list('')).body));
  });

  it('answers every bad list input with a 400 naming it', async () => {
    const cases: [string, unknown, string][] = [
      ['?sort_by=model', undefined, 'sort_by'],
      ['?sort_by=--cost', undefined, 'sort_by'],
      ['?fetch_filters=perhaps', undefined, 'fetch_filters'],
      ['?cost[value]=1&cost[operator]=gte', undefined, 'cost[operator]'],
      ['?status_code=ok', undefined, 'status_code'],
      ['', { filters: { bogus: { value: [1] } } }, 'filters.bogus'],
      ['', { filters: { cost: { operator: 'contains', value: ['1'] } } }, 'filters.cost.operator'],
      ['', { filters: { cost: { operator: 'lt', value: [] } } }, 'filters.cost.value'],
      ['', { filters: 'model=gpt' }, 'filters'],
    ];
    for (const [query, body, param] of cases) {
      const res = await list(query, body);
      assert.equal(res.status, 400, `${query} ${JSON.stringify(body)}`);
      assert.equal(res.body.error.param, param, `${query} ${JSON.stringify(body)}`);
      assert.equal(res.body.error.type, 'invalid_request_error');
      assert.ok(res.body.detail.length > 10);
    }
  });
});
