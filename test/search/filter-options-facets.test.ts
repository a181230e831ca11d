/**
 * filter_options over long ranges comes from facet counts kept by every write (src/logs/facets.ts).
 * Logs spread over three days, some in the test environment, some with their metadata replaced and
 * some deleted: for ranges with whole days, whole hours and partial hours, value_choices must equal
 * counts computed here from what was sent.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createApiKey } from '../../src/auth/api-keys.js';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';
import { rng } from '../support/rng.js';
import { planFacetRanges } from '../../src/logs/list/facet-ranges.js';

interface Sent {
  unique_id: string;
  is_test: boolean;
  timestamp: number;
  fields: Record<string, string | number | null>;
  metadata: Record<string, unknown>;
}

/** error_code is null for most logs: counted in none of its choices. */
const FIELDS = ['model', 'customer_identifier', 'status_code', 'log_type', 'environment', 'error_code'];
const HOUR = 3_600_000;

describe('filter_options from facet counts', () => {
  let t: TestApp;
  let a: Tenant;
  const r = rng(7);
  const logs: Sent[] = [];
  let testKey = '';
  const keyOf = (l: Sent) => (l.is_test ? testKey : a.key);
  // A fixed end not aligned to an hour, so ranges ending there have partial hours.
  const end = Math.floor(Date.now() / HOUR) * HOUR - 17 * 60_000 - 12_345;
  const start = end - 3 * 24 * HOUR;

  before(async () => {
    t = await startApp();
    a = await t.tenant();
    testKey = (await createApiKey(t.db.db, { organizationId: a.org.id, name: 'test', isTest: true })).key;
    const make = (isTest: boolean): Sent => {
      const metadata: Record<string, unknown> = {};
      if (r.next() < 0.7) metadata.plan = r.pick(['free', 'pro', 'Pro']);
      if (r.next() < 0.4) metadata.tier = r.pick([1, 2, 3]);
      if (r.next() < 0.2) metadata.beta = r.pick([true, false]);
      return {
        unique_id: '',
        is_test: isTest,
        timestamp: start + r.int(0, end - start),
        fields: {
          model: r.pick(['gpt-4o', 'gpt-4o-mini', 'text-embedding-3-small']),
          customer_identifier: r.pick(['alice', 'Alice', 'bob', 'carol%']),
          status_code: r.pick([200, 200, 400, 500]),
          log_type: r.pick(['chat', 'embedding']),
          environment: r.pick(['prod', 'staging']),
          error_code: r.pick([null, null, 'rate_limited', 'upstream_error']),
        },
        metadata,
      };
    };
    for (let i = 0; i < 500; i++) logs.push(make(r.next() < 0.15));
    const body = (list: Sent[]) =>
      list.map((l) => ({
        ...l.fields,
        timestamp: new Date(l.timestamp).toISOString(),
        metadata: l.metadata,
      }));
    for (const [key, isTest] of [
      [a.key, false],
      [testKey, true],
    ] as const) {
      const sent = logs.filter((l) => l.is_test === isTest);
      const res = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', { key, body: body(sent) });
      assert.equal(res.status, 201);
      sent.forEach((l, i) => (l.unique_id = res.body.unique_ids[i]));
    }
    await t.flush();
    // Replace the metadata of some logs and delete others.
    for (const l of logs.slice(0, 30)) {
      l.metadata = r.next() < 0.5 ? {} : { plan: 'enterprise', region: r.pick(['eu', 'us']) };
      const res = await api(t.baseUrl, 'PATCH', `/api/request-logs/${l.unique_id}/`, {
        key: keyOf(l),
        body: { metadata: l.metadata },
      });
      assert.equal(res.status, 200);
    }
    for (const l of logs.splice(30, 40)) {
      assert.equal(
        (await api(t.baseUrl, 'DELETE', `/api/request-logs/${l.unique_id}/`, { key: keyOf(l) })).status,
        204,
      );
    }
  });
  after(() => t.close());

  const expected = (from: number, to: number, isTest: boolean | null) => {
    const counts = new Map<string, Map<string | number, number>>();
    const add = (field: string, value: string | number) => {
      const m = counts.get(field) ?? new Map<string | number, number>();
      m.set(value, (m.get(value) ?? 0) + 1);
      counts.set(field, m);
    };
    for (const l of logs) {
      if (l.timestamp < from || l.timestamp > to || (isTest !== null && l.is_test !== isTest)) continue;
      for (const f of FIELDS) if (l.fields[f] !== null) add(f, l.fields[f]!);
      for (const [k, v] of Object.entries(l.metadata))
        add(`metadata__${k}`, typeof v === 'string' ? v : JSON.stringify(v));
    }
    const result: Record<string, { value: string | number; count: number }[]> = {};
    for (const [field, m] of counts) {
      result[field] = [...m]
        .map(([value, count]) => ({ value, count }))
        .sort((x, y) => y.count - x.count || (x.value < y.value ? -1 : x.value > y.value ? 1 : 0));
    }
    return result;
  };

  it('match counts computed from the logs for whole days, whole hours and partial hours', async () => {
    const ranges: [number, number][] = [
      [start, end],
      [end - 3600_000, end],
      [start + 5 * 60_000, end - 26 * HOUR],
      [Math.floor(start / HOUR) * HOUR + 2 * HOUR, Math.floor(end / HOUR) * HOUR - 1],
      [end - 30 * 60_000, end - 10 * 60_000],
    ];
    for (let i = 0; i < 6; i++) {
      const from = r.int(start, end);
      ranges.push([from, r.int(from, end)]);
    }
    for (const [from, to] of ranges) {
      for (const env of ['', '&is_test=true', '&all_envs=true']) {
        const isTest = env === '' ? false : env === '&is_test=true' ? true : null;
        const query = `?fetch_filters=true&page_size=1&start_time=${new Date(from).toISOString()}&end_time=${new Date(to).toISOString()}${env}`;
        const res = await api(t.baseUrl, 'GET', `/api/request-logs/list/${query}`, { key: a.key });
        assert.equal(res.status, 200);
        const options = res.body.filter_options as Record<
          string,
          { value_choices: { value: unknown; count: number }[] }
        >;
        const want = expected(from, to, isTest);
        for (const f of FIELDS) {
          const got = options[f].value_choices.map((c) => ({ value: c.value, count: c.count }));
          assert.deepEqual(got, want[f] ?? [], `${f} over ${query}`);
        }
        const metadataFields = Object.keys(options)
          .filter((k) => k.startsWith('metadata__'))
          .sort();
        assert.deepEqual(
          metadataFields,
          Object.keys(want)
            .filter((k) => k.startsWith('metadata__'))
            .sort(),
          query,
        );
        for (const f of metadataFields) {
          const got = options[f].value_choices.map((c) => ({ value: c.value, count: c.count }));
          assert.deepEqual(got, want[f], `${f} over ${query}`);
        }
      }
    }
  });
});

describe('planFacetRanges', () => {
  it('tiles [start, end] exactly: raw edges, whole hours, whole days, no gap and no overlap', () => {
    const r = rng(11);
    const DAY = 24 * HOUR;
    const base = Date.UTC(2026, 10, 1);
    const cases: [number, number][] = [
      [base, base + 3 * DAY - 1],
      [base, base + 3 * DAY],
      [base + 1, base + HOUR],
      [base + HOUR - 1, base + 2 * HOUR],
      [base, base],
      [base + 5, base + 5 + 7 * DAY],
    ];
    for (let i = 0; i < 500; i++) {
      const from = base + r.int(0, 5 * DAY);
      cases.push([from, from + r.int(0, r.next() < 0.5 ? 3 * HOUR : 9 * DAY)]);
    }
    for (const [start, end] of cases) {
      const plan = planFacetRanges(start, end);
      const pieces: [number, number][] = [
        ...plan.raw.map(([a, b]) => [a, b + 1] as [number, number]),
        ...plan.hours,
        ...(plan.days ? [plan.days] : []),
      ].sort((x, y) => x[0] - y[0]);
      assert.equal(pieces[0][0], start);
      for (let i = 1; i < pieces.length; i++) assert.equal(pieces[i][0], pieces[i - 1][1], `gap in ${start}..${end}`);
      assert.equal(pieces[pieces.length - 1][1], end + 1);
      for (const [a, b] of plan.hours) assert.ok(a % HOUR === 0 && b % HOUR === 0 && a < b);
      if (plan.days) assert.ok(plan.days[0] % DAY === 0 && plan.days[1] % DAY === 0 && plan.days[0] < plan.days[1]);
      // Logs are read for at most the two partial hours at the edges.
      for (const [a, b] of plan.raw) assert.ok(b - a < 2 * HOUR && a <= b);
    }
  });
});

describe('filter_options with many metadata keys', () => {
  it('offers the first 50 keys that have values in the range, in key order', async () => {
    const t = await startApp();
    try {
      const a = await t.tenant();
      const metadata = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`k${String(i).padStart(2, '0')}`, i]));
      const timestamp = new Date(Date.now() - 2 * 24 * HOUR).toISOString();
      const res = await api(t.baseUrl, 'POST', '/api/request-logs/create/', {
        key: a.key,
        body: { metadata, timestamp },
      });
      assert.equal(res.status, 201);
      await t.flush();
      const start = new Date(Date.now() - 3 * 24 * HOUR).toISOString();
      const list = await api(t.baseUrl, 'GET', `/api/request-logs/list/?fetch_filters=true&start_time=${start}`, {
        key: a.key,
      });
      const keys = Object.keys(list.body.filter_options).filter((k) => k.startsWith('metadata__'));
      assert.deepEqual(
        keys.sort(),
        Array.from({ length: 50 }, (_, i) => `metadata__k${String(i).padStart(2, '0')}`),
      );
      assert.deepEqual(list.body.filter_options.metadata__k07.value_choices, [{ name: '7', value: '7', count: 1 }]);
    } finally {
      await t.close();
    }
  });
});
