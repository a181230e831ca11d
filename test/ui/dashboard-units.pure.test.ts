/**
 * The dashboard's pure pieces: the log types it counts as model calls (the server's non-span types) and
 * the state it counts, a sum per bucket on a chart, the order of its top-N tables, and its time axis (steps and labels by the
 * window's length).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LOG_TYPES, SPAN_LOG_TYPES } from '../../src/logs/log-types.js';
import { parseSummaryBody } from '../../src/logs/summary/request.js';
import { MODEL_CALL_TYPES } from '../../ui/src/lib/log-types.js';
import { MODEL_CALLS, modelCallsOf, sumColumn, summaryBody } from '../../ui/src/lib/summary.js';
import { DAY, MULTI_DAY, tickLabel, timeSteps } from '../../ui/src/lib/time-axis.js';
import {
  DEFAULT_TOP_SORT,
  nextTopSort,
  parseTopSort,
  sortTopRows,
  topSortText,
  type TopRow,
} from '../../ui/src/lib/top-sort.js';
import type { ViewState } from '../../ui/src/lib/view-state.js';

describe('the log types the dashboard counts', () => {
  it('are the server’s types that are not spans', () => {
    const spans: readonly string[] = SPAN_LOG_TYPES;
    assert.deepEqual([...MODEL_CALL_TYPES].sort(), LOG_TYPES.filter((t) => !spans.includes(t)).sort());
  });

  const window: ViewState['window'] = { kind: 'relative', span: '7d', at: '2026-11-24T22:00:00.000Z' };
  it('adds model calls to the filters, unless they pick log types themselves', () => {
    const model = { field: 'model', operator: '' as const, values: ['gpt-4o'] };
    assert.deepEqual(modelCallsOf({ window, conditions: [model] }).conditions, [model, MODEL_CALLS]);
    const tools = { field: 'log_type', operator: '' as const, values: ['tool'] };
    assert.deepEqual(modelCallsOf({ window, conditions: [tools] }).conditions, [tools]);
    const quick = { window, conditions: [], quick: [['log_type', 'workflow']] as [string, string][] };
    assert.deepEqual(modelCallsOf(quick).conditions, []);
  });

  it('makes a summary body the server takes, with log_type in the model-call types', () => {
    const body = summaryBody(modelCallsOf({ window, conditions: [] }), Date.parse(window.at!), 'UTC', [
      { agg: 'count' },
    ]);
    assert.deepEqual(body.filters, { log_type: { operator: 'in', value: [...MODEL_CALL_TYPES] } });
    const parsed = parseSummaryBody('org', body);
    assert.ok(parsed.filter, 'a filter');
  });
});

describe('a sum charted per bucket', () => {
  it('is 0 in a bucket without logs, a gap where its logs have no value', () => {
    // [count, cost] per bucket: none; two priced; one of an unknown price.
    const points = [
      [0, null],
      [2, 0.5],
      [1, null],
    ];
    assert.deepEqual(sumColumn(points, 1), [0, 0.5, null]);
  });
});

describe('the order of a top-N table', () => {
  const row = (name: string, requests: number, cost: number | null, other = false): TopRow => ({
    name,
    other,
    requests,
    errors: requests > 0 ? 0 : null,
    cost,
    latency: null,
  });
  const rows = [row('a', 20, 5), row('b', 15, 1.5), row('c', 5, null), row('d', 2, 8), row('Others', 30, 9, true)];
  const names = (rs: TopRow[]) => rs.map((r) => r.name);

  it('ranks by cost either way, unknown costs after known ones, "Others" last', () => {
    assert.deepEqual(names(sortTopRows(rows, { column: 'cost', descending: true })), ['d', 'a', 'b', 'c', 'Others']);
    assert.deepEqual(names(sortTopRows(rows, { column: 'cost', descending: false })), ['b', 'a', 'd', 'c', 'Others']);
    assert.deepEqual(names(sortTopRows(rows, { column: 'name', descending: true })), ['d', 'c', 'b', 'a', 'Others']);
    assert.deepEqual(names(sortTopRows(rows, DEFAULT_TOP_SORT)), ['a', 'b', 'c', 'd', 'Others']);
  });

  it('turns a column’s order round on a second click; numbers start largest first, names A to Z', () => {
    const cost = nextTopSort(DEFAULT_TOP_SORT, 'cost');
    assert.deepEqual(cost, { column: 'cost', descending: true });
    assert.deepEqual(nextTopSort(cost, 'cost'), { column: 'cost', descending: false });
    assert.deepEqual(nextTopSort(cost, 'name'), { column: 'name', descending: false });
  });

  it('is kept as text and read back; anything else reads as the default', () => {
    assert.equal(topSortText({ column: 'cost', descending: true }), '-cost');
    assert.deepEqual(parseTopSort('-cost'), { column: 'cost', descending: true });
    assert.deepEqual(parseTopSort('latency'), { column: 'latency', descending: false });
    assert.deepEqual(parseTopSort('-price'), DEFAULT_TOP_SORT);
    assert.deepEqual(parseTopSort(3), DEFAULT_TOP_SORT);
  });
});

describe('the time axis', () => {
  const utc = (iso: string) => {
    const d = new Date(iso);
    // Read in UTC, as uPlot's tzDate gives a UTC chart its dates.
    return {
      getFullYear: () => d.getUTCFullYear(),
      getMonth: () => d.getUTCMonth(),
      getDate: () => d.getUTCDate(),
      getHours: () => d.getUTCHours(),
      getMinutes: () => d.getUTCMinutes(),
    };
  };

  it('ticks whole days or more over a window of a few days or more; any step over a shorter one', () => {
    assert.ok(timeSteps(7 * DAY).every((s) => s >= DAY));
    assert.ok(timeSteps(30 * DAY).every((s) => s >= DAY));
    assert.ok(timeSteps(MULTI_DAY).every((s) => s >= DAY));
    assert.ok(timeSteps(DAY).some((s) => s < DAY));
    assert.equal(Math.min(...timeSteps(3600)), 60);
  });

  it('reads dates for day steps, times of day for shorter ones, the date where a day begins', () => {
    assert.equal(tickLabel(utc('2026-11-22T00:00:00Z'), DAY), 'Nov 22');
    assert.equal(tickLabel(utc('2026-11-22T00:00:00Z'), 7 * DAY), 'Nov 22');
    assert.equal(tickLabel(utc('2026-11-22T06:00:00Z'), 6 * 3600), '06:00');
    assert.equal(tickLabel(utc('2026-11-23T00:00:00Z'), 6 * 3600), 'Nov 23');
    assert.equal(tickLabel(utc('2026-11-22T14:35:00Z'), 300), '14:35');
    assert.equal(tickLabel(utc('2026-11-01T00:00:00Z'), 30 * DAY), 'Nov');
    assert.equal(tickLabel(utc('2027-01-01T00:00:00Z'), 30 * DAY), '2027');
    assert.equal(tickLabel(utc('2027-01-01T00:00:00Z'), 365 * DAY), '2027');
  });
});
