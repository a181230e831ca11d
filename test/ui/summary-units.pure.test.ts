/**
 * The web UI's pure pieces behind the dashboard and the chart strip: the summary body of a view state
 * (checked by the server's own parser), the dashboard's URL read back as a screen and a state, the
 * explorer URL a click opens, and the windows of a bucket and of a drag.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseSummaryBody } from '../../src/logs/summary/request.js';
import { parseScreen } from '../../ui/src/lib/screen.js';
import {
  approximation,
  bucketWindow,
  dashboardQuery,
  ERRORS,
  explorerQuery,
  groupCondition,
  spanWindow,
  summaryBody,
} from '../../ui/src/lib/summary.js';
import { parseViewState, type ViewState } from '../../ui/src/lib/view-state.js';

const AT = '2026-11-24T22:00:00.000Z';
const state: Pick<ViewState, 'window' | 'conditions' | 'quick'> = {
  window: { kind: 'relative', span: '24h', at: AT },
  conditions: [
    { field: 'model', operator: '', values: ['gpt-4o'] },
    { field: 'customer_identifier', operator: 'not', values: ['acme'] },
  ],
  quick: [['feature', 'search']],
};

describe('web UI summary body', () => {
  it('asks for the window, the filters and the URL quick filters, as the server reads them', () => {
    const body = summaryBody(state, Date.parse(AT) + 5000, 'Europe/Paris', [{ agg: 'count' }], 'model', 5);
    assert.equal(body.start_time, '2026-11-23T22:00:00.000Z');
    assert.equal(body.end_time, AT, 'the anchor, not now');
    assert.deepEqual(body.filters, {
      model: { operator: '', value: ['gpt-4o'] },
      customer_identifier: { operator: 'not', value: ['acme'] },
      metadata__feature: { operator: '', value: ['search'] },
    });
    assert.deepEqual(body.group_by, ['model']);
    assert.equal(body.limit, 5);
    const parsed = parseSummaryBody('org', body);
    assert.equal(parsed.tz, 'Europe/Paris');
    assert.deepEqual(
      parsed.groupBy.map((g) => g.name),
      ['model'],
    );
    assert.equal(parsed.limit, 5);
  });

  it('asks for no group without one, and the server takes it', () => {
    const body = summaryBody({ ...state, quick: undefined }, 0, 'UTC', [
      { agg: 'count' },
      { agg: 'error_rate' },
      { field: 'latency', agg: 'p95' },
    ]);
    assert.equal('group_by' in body, false);
    assert.equal('limit' in body, false);
    assert.equal(parseSummaryBody('org', body).metrics.length, 3);
  });
});

describe('web UI dashboard URLs', () => {
  it('keeps the window and filters in the dashboard URL, read back as the dashboard', () => {
    const query = dashboardQuery(state);
    assert.match(query, /^\?v=dashboard&/);
    assert.deepEqual(parseScreen(query), { kind: 'dashboard' });
    const back = parseViewState(query);
    assert.deepEqual(back.window, state.window);
    assert.deepEqual(back.conditions, state.conditions);
    assert.deepEqual(back.quick, state.quick);
    assert.equal(
      dashboardQuery({ window: { kind: 'relative', span: '1h', at: null }, conditions: [] }),
      '?v=dashboard',
    );
  });

  it('opens the explorer with a group condition in place of one on the same field', () => {
    const query = explorerQuery(state, [groupCondition('model', 'o3')]);
    assert.equal(parseScreen(query).kind, 'logs');
    const opened = parseViewState(query);
    assert.deepEqual(opened.conditions, [
      { field: 'customer_identifier', operator: 'not', values: ['acme'] },
      { field: 'model', operator: '', values: ['o3'] },
    ]);
    assert.deepEqual(opened.window, state.window);
    assert.deepEqual(opened.quick, state.quick);
    assert.equal(opened.page, 1);

    const window = { kind: 'absolute' as const, from: '2026-11-24T21:00:00.000Z', to: '2026-11-24T21:59:59.999Z' };
    const errors = parseViewState(explorerQuery(state, [ERRORS], window));
    assert.deepEqual(errors.window, window);
    assert.deepEqual(errors.conditions.at(-1), { field: 'status_code', operator: 'gte', values: [400] });
    assert.deepEqual(groupCondition('customer_identifier', null), {
      field: 'customer_identifier',
      operator: 'isnull',
      values: [true],
    });
  });
});

describe('web UI chart windows', () => {
  const summary = {
    buckets: ['2026-11-24T20:00:00.000Z', '2026-11-24T21:00:00.000Z', '2026-11-24T22:00:00.000Z'],
    end_time: '2026-11-24T22:30:00.000Z',
  };

  it('gives a bucket the window up to the next one (inclusive ends), the last up to the end', () => {
    assert.deepEqual(bucketWindow(summary, 0), {
      kind: 'absolute',
      from: '2026-11-24T20:00:00.000Z',
      to: '2026-11-24T20:59:59.999Z',
    });
    assert.deepEqual(bucketWindow(summary, 2), {
      kind: 'absolute',
      from: '2026-11-24T22:00:00.000Z',
      to: '2026-11-24T22:30:00.000Z',
    });
  });

  it('orders a drag made right to left, in whole milliseconds', () => {
    assert.deepEqual(spanWindow(2000.7, 1000.2), {
      kind: 'absolute',
      from: '1970-01-01T00:00:01.000Z',
      to: '1970-01-01T00:00:02.001Z',
    });
  });
});

describe('web UI percentiles read from sketches', () => {
  it('says how close they are when the summary is approximate, and nothing when it is exact', () => {
    assert.equal(approximation({ approximate: true, relative_error: 0.01 }), 'each within 1 %');
    assert.equal(approximation({ approximate: false, relative_error: null }), undefined);
    assert.equal(approximation({}), undefined);
  });
});
