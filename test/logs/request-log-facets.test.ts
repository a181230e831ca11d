/**
 * GET|POST /api/request-logs/facets/: each field's value counts among the logs matching every filter
 * but that field's own, against a reference computed here from the same seeded logs — with several
 * filters active, filters that keep most logs (counted as the scope's counts less the rest) and few,
 * an OR across fields, the environment scope and ranges with partial hours; on the database
 * GATELOG_TEST_DB names.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createApiKey } from '../../src/auth/api-keys.js';
import { facetCountTuning } from '../../src/logs/list/facet-counts.js';
import { timeSlices } from '../../src/logs/list/scope.js';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';
import { rng } from '../support/rng.js';

interface Sent {
  is_test: boolean;
  timestamp: number;
  fields: Record<string, string | number | null>;
  metadata: Record<string, unknown>;
}

/** error_code is null for a call that succeeded: a value of none of its counts. */
const FIELDS = ['model', 'customer_identifier', 'status_code', 'log_type', 'environment', 'provider_id', 'error_code'];
const HOUR = 3_600_000;

/** A filter as the test knows it: the field it is on, and which logs it keeps. */
interface RefFilter {
  field: string;
  keeps: (l: Sent) => boolean;
}

const valueOf = (l: Sent, field: string): unknown =>
  field.startsWith('metadata__') ? l.metadata[field.slice('metadata__'.length)] : l.fields[field];

/** A metadata value's text form, as filters and counts see it: strings as they are, the rest as JSON. */
const metadataText = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

const eq = (field: string, ...values: (string | number)[]): RefFilter => ({
  field,
  keeps: (l) => values.some((v) => String(valueOf(l, field)) === String(v)),
});

type Choices = { value: string | number; count: number }[];

describe('time slices of a scope', () => {
  it('cover the range exactly, without overlap, every millisecond in one slice', () => {
    const scope = { organizationId: 'o', isTest: false, start: 1_000, end: 1_009 };
    for (const count of [1, 2, 3, 4, 10, 11]) {
      const slices = timeSlices(scope, count);
      assert.equal(slices.length, Math.min(count, 10));
      assert.equal(slices[0].start, scope.start);
      assert.equal(slices.at(-1)!.end, scope.end);
      for (const [i, slice] of slices.entries()) {
        assert.ok(slice.start <= slice.end, `slice ${i} of ${count} is not empty`);
        if (i > 0) assert.equal(slice.start, slices[i - 1].end + 1, `slice ${i} of ${count} follows the last`);
        assert.deepEqual({ ...slice, start: 0, end: 0 }, { ...scope, start: 0, end: 0 });
      }
    }
    assert.deepEqual(timeSlices({ ...scope, end: scope.start }, 2), [{ ...scope, end: scope.start }]);
  });
});

describe('facet counts that honour the other filters', () => {
  let t: TestApp;
  let a: Tenant;
  const r = rng(19);
  const logs: Sent[] = [];
  // An end not aligned to an hour: the range has partial hours (read from the logs) and whole days
  // and hours (read from the facet counts).
  const end = Math.floor(Date.now() / HOUR) * HOUR - 23 * 60_000 - 4_321;
  const start = end - 2 * 24 * HOUR - 5 * HOUR;
  const range = `start_time=${new Date(start).toISOString()}&end_time=${new Date(end).toISOString()}`;

  before(async () => {
    t = await startApp();
    a = await t.tenant();
    const testKey = (await createApiKey(t.db.db, { organizationId: a.org.id, name: 'test', isTest: true })).key;
    for (let i = 0; i < 600; i++) {
      const metadata: Record<string, unknown> = {};
      if (r.next() < 0.8) metadata.plan = r.pick(['free', 'pro', 'enterprise']);
      if (r.next() < 0.5) metadata.region = r.pick(['eu', 'us']);
      if (r.next() < 0.3) metadata.tier = r.pick([1, 2]);
      // Values of every JSON type, escapes and a null (counted as absent).
      if (r.next() < 0.4) metadata.note = r.pick([true, false, 1.5, { a: [1, 'x'] }, ['y'], 'say "hi" ünï\n', null]);
      const status = r.pick([200, 200, 200, 200, 400, 429, 500]);
      logs.push({
        is_test: r.next() < 0.1,
        // Some logs just outside the range on either side.
        timestamp: start - HOUR + r.int(0, end - start + 2 * HOUR),
        fields: {
          model: r.pick(['gpt-4o', 'gpt-4o', 'gpt-4o-mini', 'claude-3', 'text-embedding-3-small']),
          customer_identifier: r.pick(['alice', 'Alice', 'bob', 'carol%', 'dave']),
          status_code: status,
          log_type: r.pick(['chat', 'chat', 'embedding']),
          environment: r.pick(['prod', 'prod', 'staging']),
          provider_id: r.pick(['openai', 'anthropic']),
          error_code: status === 200 ? null : r.pick(['rate_limited', 'upstream_error', 'model_not_allowed']),
        },
        metadata,
      });
    }
    for (const [key, isTest] of [
      [a.key, false],
      [testKey, true],
    ] as const) {
      const body = logs
        .filter((l) => l.is_test === isTest)
        .map((l) => ({ ...l.fields, timestamp: new Date(l.timestamp).toISOString(), metadata: l.metadata }));
      const res = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', { key, body });
      assert.equal(res.status, 201, res.text);
    }
    await t.flush();
  });
  after(() => t.close());

  /** Each field's counts among the production logs of the range that every filter on another field keeps. */
  function reference(filters: RefFilter[], isTest: boolean | null = false) {
    const inScope = logs.filter(
      (l) => l.timestamp >= start && l.timestamp <= end && (isTest === null || l.is_test === isTest),
    );
    const fields = new Set([...FIELDS]);
    for (const l of inScope) for (const k of Object.keys(l.metadata)) fields.add(`metadata__${k}`);
    const result: Record<string, Choices> = {};
    for (const field of fields) {
      const counts = new Map<string | number, number>();
      for (const l of inScope) {
        if (!filters.every((f) => f.field === field || f.keeps(l))) continue;
        const v = valueOf(l, field);
        if (v === undefined || v === null) continue;
        const value = field.startsWith('metadata__') ? metadataText(v) : (v as string | number);
        counts.set(value, (counts.get(value) ?? 0) + 1);
      }
      result[field] = [...counts]
        .map(([value, count]) => ({ value, count }))
        .sort((x, y) => y.count - x.count || (x.value < y.value ? -1 : x.value > y.value ? 1 : 0));
    }
    return result;
  }

  async function check(query: string, body: unknown, filters: RefFilter[], isTest: boolean | null = false) {
    const res = await api(
      t.baseUrl,
      body === undefined ? 'GET' : 'POST',
      `/api/request-logs/facets/?${range}${query}`,
      {
        key: a.key,
        body,
      },
    );
    assert.equal(res.status, 200, res.text);
    const options = res.body.filter_options as Record<string, { value_choices: Choices }>;
    const want = reference(filters, isTest);
    for (const [field, choices] of Object.entries(want)) {
      assert.ok(options[field], `${field} is offered (${query})`);
      const got = options[field].value_choices.map((c) => ({ value: c.value, count: c.count }));
      assert.deepEqual(got, choices, `${field} with ${query} ${JSON.stringify(body ?? '')}`);
    }
    // Number fields are offered too, without choices, as in the list's filter_options.
    assert.deepEqual(options.cost.value_choices, []);
    return options;
  }

  it('without filters, equals the list’s filter_options', async () => {
    const options = await check('', undefined, []);
    const list = await api(t.baseUrl, 'GET', `/api/request-logs/list/?${range}&fetch_filters=true&page_size=1`, {
      key: a.key,
    });
    assert.equal(list.status, 200);
    assert.deepEqual(options, list.body.filter_options);
  });

  it('leaves a field’s own filter out of its counts and applies it to every other field', async () => {
    await check('&model=gpt-4o', undefined, [eq('model', 'gpt-4o')]);
    await check('&metadata__plan=pro', undefined, [eq('metadata__plan', 'pro')]);
  });

  it('honours several filters at once: URL and body, metadata, substrings, negations', async () => {
    const filters = {
      model: { operator: 'in', value: ['gpt-4o', 'claude-3'] },
      customer_identifier: { operator: 'icontains', value: ['ALI'] },
      metadata__plan: { value: ['pro', 'enterprise'] },
    };
    await check('&status_code[value]=500&status_code[operator]=not', { filters }, [
      eq('model', 'gpt-4o', 'claude-3'),
      {
        field: 'customer_identifier',
        keeps: (l) => String(l.fields.customer_identifier).toLowerCase().includes('ali'),
      },
      eq('metadata__plan', 'pro', 'enterprise'),
      { field: 'status_code', keeps: (l) => l.fields.status_code !== 500 },
    ]);
  });

  it('counts right whether the other filters keep most logs or few', async () => {
    // Keeps most logs: the counts are the scope's less those of the logs left out.
    const most = {
      filters: { status_code: { operator: 'not', value: [429] }, log_type: { value: ['chat', 'embedding'] } },
    };
    await check('', most, [
      { field: 'status_code', keeps: (l) => l.fields.status_code !== 429 },
      eq('log_type', 'chat', 'embedding'),
    ]);
    // A metadata filter that keeps most logs, one that keeps none, a number filter.
    await check(
      '',
      { filters: { metadata__tier: { operator: 'not', value: ['2'] }, cost: { operator: 'gte', value: 0 } } },
      [{ field: 'metadata__tier', keeps: (l) => String(l.metadata.tier) !== '2' }],
    );
    await check('&model=gpt-4o', { filters: { customer_identifier: { value: ['nobody'] } } }, [
      eq('model', 'gpt-4o'),
      eq('customer_identifier', 'nobody'),
    ]);
  });

  it('counts right the ways meant for many logs: time slices side by side, GROUP BYs', async () => {
    // SQLite reads many matching logs in slices of the range, one per reader thread; PostgreSQL counts
    // many by GROUP BYs instead of sending them. Here every count is made so (three slices: more than
    // the reader threads, as a machine with more cores would cut).
    const tuning = { ...facetCountTuning };
    Object.assign(facetCountTuning, { slicedRows: 0, slices: 3, sentRows: -1 });
    try {
      await check('&model=gpt-4o', undefined, [eq('model', 'gpt-4o')]);
      await check('&metadata__note=true', { filters: { status_code: { value: [200] } } }, [
        { field: 'metadata__note', keeps: (l) => l.metadata.note === true },
        eq('status_code', 200),
      ]);
    } finally {
      Object.assign(facetCountTuning, tuning);
    }
  });

  it('counts metadata the database cannot read as JSON text (a lone surrogate) from its side table', async () => {
    // PostgreSQL counts many logs' metadata from their JSON in SQL, which refuses an escaped lone
    // surrogate: those counts then come from the side table. In an organization of its own.
    const b = await t.tenant();
    const odd = 'x\ud800y';
    // A model of fewer than half the logs: its logs counted as they are, not the scope's less the rest.
    const body = Array.from({ length: 32 }, (_, i) => ({
      model: i < 12 ? 'gpt-4o' : 'claude-3',
      timestamp: new Date(end - (i + 1) * 60_000).toISOString(),
      metadata: { plan: i % 3 === 0 ? 'pro' : 'free', ...(i < 12 && i % 4 === 0 ? { odd } : {}) },
    }));
    const res = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', { key: b.key, body });
    assert.equal(res.status, 201, res.text);
    await t.flush();
    const tuning = { ...facetCountTuning };
    Object.assign(facetCountTuning, { slicedRows: 0, slices: 3, sentRows: -1 });
    try {
      const facets = await api(t.baseUrl, 'GET', `/api/request-logs/facets/?${range}&model=gpt-4o`, { key: b.key });
      assert.equal(facets.status, 200, facets.text);
      const options = facets.body.filter_options as Record<string, { value_choices: Choices }>;
      assert.deepEqual(
        options.metadata__plan.value_choices.map((c) => ({ value: c.value, count: c.count })),
        [
          { value: 'free', count: 8 },
          { value: 'pro', count: 4 },
        ],
      );
      // The value as the database holds it (the surrogate replaced), counted once per log.
      assert.deepEqual(
        options.metadata__odd.value_choices.map((c) => c.count),
        [3],
      );
    } finally {
      Object.assign(facetCountTuning, tuning);
    }
  });

  it('counts a number JSON cannot hold (1e400) as no value, as its log keeps it: null', async () => {
    const b = await t.tenant();
    // Raw JSON: 1e400 is read as Infinity, which JSON.stringify writes as null. Eight logs carry it, five
    // of them among claude-3's twenty (most logs: counted as the scope's less the rest), three of gpt-4o's.
    const logsJson = Array.from({ length: 32 }, (_, i) => {
      const at = new Date(end - (i + 1) * 60_000).toISOString();
      const big = i % 4 === 0 ? ',"big":1e400' : '';
      return `{"model":"${i < 20 ? 'claude-3' : 'gpt-4o'}","timestamp":"${at}","metadata":{"plan":"free"${big}}}`;
    });
    const res = await fetch(`${t.baseUrl}/api/request-logs/batch/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${b.key}`, 'content-type': 'application/json' },
      body: `[${logsJson.join(',')}]`,
    });
    assert.equal(res.status, 201, await res.text());
    await t.flush();
    const tuning = { ...facetCountTuning };
    Object.assign(facetCountTuning, { slicedRows: 0, slices: 3, sentRows: -1 });
    try {
      for (const [model, n] of [
        ['claude-3', 20],
        ['gpt-4o', 12],
      ] as const) {
        const facets = await api(t.baseUrl, 'GET', `/api/request-logs/facets/?${range}&model=${model}`, { key: b.key });
        assert.equal(facets.status, 200, facets.text);
        const options = facets.body.filter_options as Record<string, { value_choices: Choices } | undefined>;
        const counted = (key: string) =>
          (options[key]?.value_choices ?? []).map((c) => ({ value: c.value, count: c.count }));
        assert.deepEqual(counted('metadata__plan'), [{ value: 'free', count: n }], model);
        assert.deepEqual(counted('metadata__big'), [], `${model}: no value counted for big`);
      }
      const listed = await api(t.baseUrl, 'POST', `/api/request-logs/list/?${range}`, {
        key: b.key,
        body: { filters: { metadata__big: { operator: 'isnull', value: [true] } } },
      });
      assert.equal(listed.status, 200, listed.text);
      assert.equal(listed.body.count, 32, 'every log is without a value of big');
    } finally {
      Object.assign(facetCountTuning, tuning);
    }
  });

  it('counts right when more logs match than the estimate said (PostgreSQL sends at most so many)', async () => {
    // Two filters are estimated as independent: find a pair whose logs are more than that estimate,
    // and let PostgreSQL send no more than the estimate — the read overflows and GROUP BYs count.
    const inScope = logs.filter((l) => !l.is_test && l.timestamp >= start && l.timestamp <= end);
    const share = (field: string, value: string | number) =>
      inScope.filter((l) => l.fields[field] === value).length / inScope.length;
    let found: { model: string; status: number; actual: number; gap: number } | null = null;
    for (const model of ['gpt-4o', 'gpt-4o-mini', 'claude-3', 'text-embedding-3-small']) {
      for (const status of [200, 400, 429, 500]) {
        const estimate = Math.round(share('model', model) * share('status_code', status) * inScope.length);
        const actual = inScope.filter((l) => l.fields.model === model && l.fields.status_code === status).length;
        if (actual - estimate > (found?.gap ?? 1)) found = { model, status, actual, gap: actual - estimate };
      }
    }
    assert.ok(found, 'the seeded logs hold a pair above its estimate');
    const tuning = { ...facetCountTuning };
    Object.assign(facetCountTuning, { sentRows: found.actual - 1 });
    try {
      await check(`&model=${found.model}&status_code=${found.status}`, undefined, [
        eq('model', found.model),
        eq('status_code', found.status),
      ]);
    } finally {
      Object.assign(facetCountTuning, tuning);
    }
  });

  it('counts a nullable field’s values, never its nulls, whichever way its filters count', async () => {
    const code = (l: Sent) => l.fields.error_code;
    await check('&error_code=rate_limited', undefined, [eq('error_code', 'rate_limited')]);
    // Kept by most logs (a log without a code differs from every value): the scope's counts less the rest.
    await check('', { filters: { error_code: { operator: 'not', value: ['rate_limited'] } } }, [
      { field: 'error_code', keeps: (l) => code(l) !== 'rate_limited' },
    ]);
    await check('', { filters: { error_code: { operator: 'isnull', value: [true] }, model: { value: ['gpt-4o'] } } }, [
      { field: 'error_code', keeps: (l) => code(l) === null },
      eq('model', 'gpt-4o'),
    ]);
    await check('', { filters: { error_code: { operator: 'icontains', value: ['LIMIT', 'allowed'] } } }, [
      { field: 'error_code', keeps: (l) => /limit|allowed/.test(String(code(l) ?? '')) },
    ]);
  });

  it('applies an OR across fields to every field, and keeps the environment scope', async () => {
    // model = claude-3 OR status_code = 500: a filter of no single field.
    await check('&model=claude-3&status_code[value]=500&status_code[connector]=or&environment=staging', undefined, [
      { field: '', keeps: (l) => l.fields.model === 'claude-3' || l.fields.status_code === 500 },
      eq('environment', 'staging'),
    ]);
    await check('&is_test=true&model=gpt-4o-mini', undefined, [eq('model', 'gpt-4o-mini')], true);
    await check('&all_envs=true&log_type=embedding', undefined, [eq('log_type', 'embedding')], null);
  });

  it('answers a bad filter with a 400 naming it', async () => {
    const res = await api(t.baseUrl, 'POST', `/api/request-logs/facets/?${range}`, {
      key: a.key,
      body: { filters: { no_such_field: { value: [1] } } },
    });
    assert.equal(res.status, 400, res.text);
    assert.match(JSON.stringify(res.body), /no_such_field/);
    const time = await api(t.baseUrl, 'GET', '/api/request-logs/facets/?start_time=yesterday', { key: a.key });
    assert.equal(time.status, 400, time.text);
    assert.match(JSON.stringify(time.body), /start_time/);
  });
});
