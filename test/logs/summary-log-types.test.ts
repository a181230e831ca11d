/**
 * The summary with a log type filter, as the dashboard sends it (model calls only): a trace's workflow,
 * task, tool and agent spans are left out of the totals and of the groups (no "(none)" model — the
 * empty one — from spans without one, no count added to the model an agent span names), whether spans sit in whole hours of the
 * window or in its partial first and last hours; and where no span is in the window, the filter (which
 * then holds for every log, and is left out of the query) changes nothing. Against a reference computed
 * here, on the database GATELOG_TEST_DB names.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LOG_TYPES, SPAN_LOG_TYPES } from '../../src/logs/log-types.js';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';

const MODEL_CALLS = LOG_TYPES.filter((t) => !(SPAN_LOG_TYPES as readonly string[]).includes(t));
const DAY = '2026-11-10T';
const at = (hhmm: string) => Date.parse(`${DAY}${hhmm}:00Z`);

interface Seeded {
  ts: number;
  log_type: string;
  model: string;
  cost: number;
}

/** Model calls every 10 minutes from 10:00 to 15:50 (three models, uneven), and spans at chosen times. */
function seed(): Seeded[] {
  const logs: Seeded[] = [];
  for (let i = 0; i < 36; i++) {
    const model = i % 6 === 0 ? 'm3' : i % 3 === 0 ? 'm2' : 'm1';
    logs.push({ ts: at('10:00') + i * 600_000, log_type: i % 9 === 0 ? 'embedding' : 'chat', model, cost: 0.01 });
  }
  // An agent span that names the model its calls use, and spans without a model: in whole hours, in the
  // first partial hour of the narrow windows (10:05) and in their last (15:35, 15:50).
  logs.push({ ts: at('12:30'), log_type: 'agent', model: 'm1', cost: 0 });
  logs.push({ ts: at('13:15'), log_type: 'workflow', model: '', cost: 0 });
  logs.push({ ts: at('13:16'), log_type: 'task', model: '', cost: 0 });
  logs.push({ ts: at('10:05'), log_type: 'tool', model: '', cost: 0 });
  logs.push({ ts: at('15:35'), log_type: 'tool', model: '', cost: 0 });
  logs.push({ ts: at('15:50'), log_type: 'workflow', model: '', cost: 0 });
  return logs;
}

describe('the summary of model calls only (a log type filter)', () => {
  let t: TestApp;
  let a: Tenant;
  const logs = seed();
  const summary = (body: unknown) => api(t.baseUrl, 'POST', '/api/request-logs/summary/', { key: a.key, body });

  before(async () => {
    t = await startApp();
    a = await t.tenant();
    const res = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', {
      key: a.key,
      body: logs.map((l) => ({
        timestamp: new Date(l.ts).toISOString(),
        log_type: l.log_type,
        ...(l.model ? { model: l.model } : {}),
        cost: l.cost,
        latency: 0.5,
      })),
    });
    assert.equal(res.status, 201, res.text);
    await t.flush();
  });
  after(() => t?.close());

  /** What the summary must answer over [from, to] for the logs `keep` keeps: totals, and count per model. */
  function expected(from: number, to: number, keep: (l: Seeded) => boolean) {
    const inside = logs.filter((l) => l.ts >= from && l.ts <= to && keep(l));
    const byModel = new Map<string, number>();
    for (const l of inside) byModel.set(l.model, (byModel.get(l.model) ?? 0) + 1);
    const groups = [...byModel].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1)).map(([model, n]) => [model, n]);
    return { count: inside.length, groups };
  }

  async function answered(from: number, to: number, filters: unknown) {
    const body = {
      start_time: new Date(from).toISOString(),
      end_time: new Date(to).toISOString(),
      bucket: '1h',
      metrics: [{ agg: 'count' }, { field: 'cost', agg: 'sum' }],
      group_by: ['model'],
      limit: 10,
      ...(filters ? { filters } : {}),
    };
    const res = await summary(body);
    assert.equal(res.status, 200, res.text);
    const series = res.body.series as { group: { model: string }; other: boolean; points: number[][] }[];
    assert.ok(!series.some((s) => s.other), 'every model its own series');
    return {
      count: res.body.totals.values[0] as number,
      groups: series.map((s) => [s.group.model, s.points.reduce((n, p) => n + p[0], 0)]),
    };
  }

  const isCall = (l: Seeded) => MODEL_CALLS.includes(l.log_type as (typeof MODEL_CALLS)[number]);
  const filters = {
    in: { log_type: { operator: 'in', value: MODEL_CALLS } },
    not: { log_type: { operator: 'not', value: [...SPAN_LOG_TYPES] } },
  };

  // Whole hours; partial first and last hours with spans inside them; partial hours with none inside.
  const windows: [string, number, number][] = [
    ['10:00–16:00, spans in whole hours', at('10:00'), at('16:00') - 1],
    ['10:03–15:40, spans in the partial first and last hours', at('10:03'), at('15:40')],
    ['10:06–15:30, spans only in its whole hours', at('10:06'), at('15:30')],
    ['13:20–15:30, partial hours, no span inside', at('13:20'), at('15:30')],
  ];
  for (const [name, from, to] of windows) {
    it(`counts model calls only over ${name}`, async () => {
      const want = expected(from, to, isCall);
      assert.deepEqual(await answered(from, to, filters.in), want, "'in' the model-call types");
      assert.deepEqual(await answered(from, to, filters.not), want, "'not' the span types");
      assert.ok(!want.groups.some(([model]) => model === ''), 'no model-less group');
      // Unfiltered, the spans are there: the filter is what leaves them out.
      assert.deepEqual(
        await answered(from, to, null),
        expected(from, to, () => true),
      );
    });
  }

  it('counts one span type when asked for it', async () => {
    const want = expected(at('10:00'), at('16:00') - 1, (l) => l.log_type === 'tool');
    assert.deepEqual(want, { count: 2, groups: [['', 2]] });
    assert.deepEqual(await answered(at('10:00'), at('16:00') - 1, { log_type: { value: ['tool'] } }), want);
  });
});
