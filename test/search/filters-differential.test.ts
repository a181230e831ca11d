/**
 * Differential test of the request-log list: a seeded random data set, hundreds of seeded random
 * filter/sort/page combinations, and the plain reference implementation of docs/api.md "Listing logs" and "Filter language" in
 * support/reference.ts. Results (count and the ordered page of ids) must match exactly.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createApiKey } from '../../src/auth/api-keys.js';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';
import { rng } from '../support/rng.js';
import { SearchIndexer } from '../../src/logs/search/indexer.js';
import {
  BOOLEAN_FIELDS,
  DATETIME_FIELDS,
  type Item,
  NUMERIC_FIELDS,
  type RefFilter,
  type RefQuery,
  type RefUrlFilter,
  runReference,
  METADATA_OPERATORS,
  NUMBER_OPERATORS,
  TEXT_OPERATORS,
} from '../support/reference.js';

const SEED = Number(process.env.GATELOG_DIFF_SEED ?? 20261122);
const QUERIES = 400;

const MODELS = ['gpt-4o', 'GPT-4o', 'gpt-4o-mini', 'text-embedding-3-small', 'Claude_3%', 'o1\\preview'];
const CUSTOMERS = [
  'alice',
  'ALICE',
  'Alice',
  'bob_smith',
  'bobxsmith',
  '100%',
  '100x',
  'Émile',
  'émile',
  '',
  'back\\slash',
];
const PLANS = ['free', 'Pro', 'pro', 'pro_max', 'pro%max'];
const TIERS = [1, 2, '3', true, 2.5];
const REGIONS = ['eu_west', 'eu%west', 'EU_WEST', null];
/** error_code: a nullable field with value choices (its nulls are in no facet count). */
const ERROR_CODES = ['rate_limited', 'Rate_Limited', 'model_not_allowed', 'stream%timeout', 'upstream_error'];
/** The words of logs' text: case, Unicode (ß, CJK, combining-free accents), LIKE metacharacters. */
const WORDS = [
  'Refund',
  'refund',
  'policy',
  'POLICY',
  'Ünïcode',
  'ünïCODE',
  'Straße',
  'STRASSE',
  '退款政策',
  '政策',
  '100%',
  '100x',
  'a_b',
  'axb',
  'back\\slash',
  'ok',
  'x',
  'weather',
  // Repeats a trigram (`ana`): its search is a phrase of its start and an exact check (fts-match.ts).
  'Banana',
];
/** Search values: whole words, parts of words (some shorter than three characters), several terms. */
const SEARCH_TERMS = [
  'refund',
  'REFUND',
  'ref',
  'und',
  'policy',
  'refund policy',
  'refund  POLICY',
  'ünïcode',
  'ÜNÏ',
  'ü',
  'ß',
  'straße',
  'strasse',
  'ss',
  '退款',
  '政',
  '%',
  '0%',
  '_',
  'a_b',
  '\\',
  'k\\s',
  'x',
  'ok',
  'o',
  'paris',
  'user',
  'timeout',
  'nowhere-to-be-found',
  ' ',
  // A trigram repeated within a term, or asked for by an earlier term: phrases of what is new, and
  // exact checks of the rest (src/logs/search/fts-match.ts).
  'banana',
  'anana',
  'und refund',
  'efund refund',
  'policy policy',
];

describe('request-log list: differential test against a reference implementation', () => {
  let t: TestApp;
  let a: Tenant;
  let items: Item[] = [];
  const rank = new Map<string, number>();
  const evaluators: string[] = [];
  const r = rng(SEED);
  // The logs' text from a stream of its own: the other fields' stream (and its queries) stay as they were.
  const rt = rng(SEED + 1);
  /** custom_identifier → the strings of the log's text (what the search reference looks in). */
  const searchStrings = new Map<string, string[]>();
  const now = Date.now();
  const sentence = () => Array.from({ length: rt.int(0, 4) }, () => rt.pick(WORDS)).join(rt.pick([' ', ' ', '', '\n']));
  /** The log's text fields and every string in them (JSON strings, keys left out). */
  const logText = (n: number) => {
    const strings: string[] = [];
    const fields: Record<string, unknown> = { custom_identifier: `w${n}` };
    const prompt = sentence();
    if (rt.next() < 0.5) {
      fields.input = [{ role: 'user', content: prompt }];
      strings.push('user', prompt);
    } else if (rt.next() < 0.8) {
      fields.input = prompt;
      strings.push(prompt);
    }
    const answer = sentence();
    if (rt.next() < 0.5) {
      fields.output = { role: 'assistant', content: answer };
      strings.push('assistant', answer);
    } else if (rt.next() < 0.8) {
      fields.output = answer;
      strings.push(answer);
    }
    if (rt.next() < 0.2) {
      const args = JSON.stringify({ city: rt.pick(['Paris', 'PARIS', 'Zürich']), note: sentence() });
      fields.tool_calls = [{ id: `call_${n}`, type: 'function', function: { name: 'get_weather', arguments: args } }];
      strings.push(`call_${n}`, 'function', 'get_weather', args);
    }
    if (rt.next() < 0.15) {
      const error = `upstream timeout ${sentence()}`;
      fields.error_message = error;
      strings.push(error);
    }
    if (rt.next() < 0.3) fields.error_code = rt.pick(ERROR_CODES);
    searchStrings.set(
      `w${n}`,
      strings.filter((s) => s !== ''),
    );
    return fields;
  };
  let logNumber = 0;

  before(async () => {
    t = await startApp();
    a = await t.tenant();
    const testKey = (await createApiKey(t.db.db, { organizationId: a.org.id, name: 'test', isTest: true })).key;
    for (const name of ['quality', 'safety']) {
      evaluators.push((await api(t.baseUrl, 'POST', '/api/evaluators/', { key: a.key, body: { name } })).body.id);
    }
    const makeLog = () => {
      const metadata: Record<string, unknown> = {};
      if (r.next() < 0.6) metadata.plan = r.pick(PLANS);
      if (r.next() < 0.5) metadata.tier = r.pick(TIERS);
      if (r.next() < 0.4) metadata.region = r.pick(REGIONS);
      const minutesAgo = r.next() < 0.1 ? r.int(70, 180) : r.int(0, 55);
      return {
        ...logText(logNumber++),
        model: r.pick(MODELS),
        customer_identifier: r.pick(CUSTOMERS),
        status_code: r.pick([200, 200, 200, 201, 400, 500]),
        cost: r.next() < 0.2 ? 0 : Math.round(r.next() * 1000) / 10000,
        latency: r.int(0, 40) / 10,
        ttft: r.next() < 0.3 ? null : r.int(1, 20) / 10,
        prompt_tokens: r.int(0, 50),
        completion_tokens: r.int(0, 50),
        stream: r.next() < 0.3,
        environment: r.pick(['prod', 'prod', 'staging']),
        thread_identifier: r.next() < 0.5 ? null : r.pick(['t1', 'T1', 't2']),
        timestamp: new Date(now - minutesAgo * 60_000 - r.int(0, 59_000)).toISOString(),
        metadata,
      };
    };
    const prod = Array.from({ length: 360 }, makeLog);
    const test = Array.from({ length: 40 }, makeLog);
    await api(t.baseUrl, 'POST', '/api/request-logs/batch/', { key: a.key, body: prod });
    await api(t.baseUrl, 'POST', '/api/request-logs/batch/', { key: testKey, body: test });
    await t.flush();
    // Every log, newest first (the id order the reference needs for ranks and ties).
    const everything = async () =>
      (
        (
          await api(
            t.baseUrl,
            'GET',
            '/api/request-logs/list/?all_envs=true&page_size=1000&start_time=2000-01-01T00:00:00Z',
            { key: a.key },
          )
        ).body.results as Item[]
      ).map((item) => ({ ...item, searchStrings: searchStrings.get(item.custom_identifier as string) }));
    items = await everything();
    assert.equal(items.length, 400);
    items.forEach((item, index) => rank.set(item.unique_id, items.length - index));
    for (const item of items) {
      for (const [i, evaluatorId] of evaluators.entries()) {
        if (r.next() < 0.3) {
          await api(t.baseUrl, 'POST', `/api/logs/${item.unique_id}/scores/`, {
            key: a.key,
            body: { evaluator_id: evaluatorId, numerical_value: i === 0 ? r.int(1, 5) : r.int(0, 10) / 10 },
          });
        }
      }
    }
    items = await everything();
  });
  after(() => t.close());

  const scoresOf = (item: Item) =>
    Object.fromEntries(
      Object.entries(item.scores as Record<string, { score_value: number }>).map(([k, v]) => [k, v.score_value]),
    );

  const FIELDS = [
    'model',
    'customer_identifier',
    'status_code',
    'status',
    'cost',
    'latency',
    'time_to_first_token',
    'prompt_tokens',
    'total_tokens',
    'stream',
    'environment',
    'thread_identifier',
    'error_code',
    'timestamp',
    'error_count',
    'metadata__plan',
    'metadata__tier',
    'metadata__region',
    'metadata__missing',
    'scores__0',
    'scores__1',
    'search',
  ];

  function fieldName(f: string) {
    return f.startsWith('scores__') ? `scores__${evaluators[Number(f.slice(8))]}` : f;
  }

  function operatorsFor(field: string): string[] {
    if (field.startsWith('scores__')) return ['', 'gt', 'gte', 'lt', 'lte', 'not'];
    if (field === 'search') return [''];
    if (field.startsWith('metadata__')) return METADATA_OPERATORS;
    if (BOOLEAN_FIELDS.has(field)) return ['', 'in', 'isnull', 'not'];
    if (NUMERIC_FIELDS.has(field) || DATETIME_FIELDS.has(field)) return NUMBER_OPERATORS;
    return TEXT_OPERATORS;
  }

  function sampleValue(field: string, operator: string): unknown {
    const item = r.pick(items);
    if (field.startsWith('scores__')) return r.pick([1, 2, 3, 4, 5, 0.3, 0.5, 0.7]);
    if (field === 'search') return r.pick(SEARCH_TERMS);
    if (field.startsWith('metadata__')) {
      if (['lt', 'lte', 'gt', 'gte'].includes(operator)) return r.pick([1, 2, 2.5, '3', 0]);
      const pool = [
        ...PLANS,
        ...TIERS.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))),
        'eu_west',
        'EU',
        'PRO',
        'ro',
        '%',
        '_',
      ];
      const v = r.pick(pool);
      if (operator === 'icontains' || operator === 'contains') return r.next() < 0.5 ? v.slice(0, 2) : v;
      return v;
    }
    if (BOOLEAN_FIELDS.has(field)) return r.pick([true, false, 'true', 'false', 1, 0]);
    if (field === 'error_count') return r.pick([0, 1]);
    if (field === 'total_tokens') return (item.total_request_tokens as number) + r.pick([0, 0, 5, -5]);
    const v = item[field];
    if (field === 'customer_identifier' && ['contains', 'icontains', 'startswith', 'endswith'].includes(operator)) {
      return r.pick(['a', 'A', 'lic', '_', '%', '\\', 'É', 'é', 'smith', 'bob', '']);
    }
    if (field === 'model' && ['contains', 'icontains', 'startswith', 'endswith'].includes(operator)) {
      return r.pick(['gpt', 'GPT', '4o', '%', '_3', '\\', 'mini']);
    }
    if (field === 'error_code' && ['contains', 'icontains', 'startswith', 'endswith'].includes(operator)) {
      return r.pick(['limit', 'LIMIT', 'rate', '%', '_', 'error', 'Timeout']);
    }
    if (field === 'error_code' && (v === null || v === undefined)) return r.pick(ERROR_CODES);
    if (v === null || v === undefined)
      return NUMERIC_FIELDS.has(field) ? r.pick([0.5, 1, 2]) : r.pick(['t1', 'T1', 't2']);
    if (typeof v === 'number' && r.next() < 0.3) return String(v);
    return v;
  }

  function randomFilter(): RefFilter {
    const field = r.pick(FIELDS);
    const operator = r.pick(operatorsFor(field));
    let values: unknown[];
    if (operator === 'isnull') values = [r.next() < 0.5];
    else if (['lt', 'lte', 'gt', 'gte'].includes(operator)) values = [sampleValue(field, operator)];
    else if (
      operator === 'in' &&
      r.next() < 0.3 &&
      !BOOLEAN_FIELDS.has(field) &&
      !NUMERIC_FIELDS.has(field) &&
      !DATETIME_FIELDS.has(field) &&
      field !== 'customer_identifier'
    ) {
      values = [`${sampleValue(field, '')}, ${sampleValue(field, '')}`];
    } else values = Array.from({ length: r.int(1, 3) }, () => sampleValue(field, operator));
    return { field: fieldName(field), operator, values };
  }

  function randomUrlFilter(): RefUrlFilter {
    const field = r.pick(FIELDS.filter((f) => f !== 'timestamp'));
    const operator = field === 'search' ? '' : r.pick(['', '', 'not']);
    let value = sampleValue(field, operator);
    if (typeof value !== 'string')
      value = typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value);
    return { field: fieldName(field), operator, values: [value], connector: r.pick(['AND', 'OR']) };
  }

  it(`matches the reference on ${QUERIES} random queries (seed ${SEED})`, async () => {
    // A search reads every log unindexed (a third of the queries), then the first 150 logs indexed and
    // the rest unindexed, then all of them indexed.
    const indexer = new SearchIndexer(t.db, null, null, { batchSize: 150 });
    for (let n = 0; n < QUERIES; n++) {
      if (n === Math.floor(QUERIES / 3)) {
        // PostgreSQL indexes only up to a bound it saw a moment before (src/logs/search/indexer.ts).
        while ((await indexer.indexBatch()) === 0) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      if (n === Math.floor((2 * QUERIES) / 3)) await indexer.catchUp();
      const body = Array.from({ length: r.int(0, 3) }, randomFilter);
      const url = Array.from({ length: r.pick([0, 0, 1, 2, 3]) }, randomUrlFilter);
      // One filter per field in a body and in a URL, as in real requests.
      const uniqueBody = [...new Map(body.map((f) => [f.field, f])).values()];
      const uniqueUrl = [...new Map(url.map((f) => [f.field, f])).values()];
      const sortName = r.pick([
        'id',
        'timestamp',
        'cost',
        'time_to_first_token',
        'latency',
        'prompt_tokens',
        'completion_tokens',
        'all_tokens',
        'scores__0',
        'scores__1',
      ]);
      const sort = `${r.next() < 0.5 ? '-' : ''}${fieldName(sortName)}`;
      const env = r.pick<{ isTest?: boolean; allEnvs?: boolean }>([
        {},
        {},
        { allEnvs: true },
        { isTest: true },
        { isTest: false, allEnvs: true },
      ]);
      const wide = r.next() < 0.4;
      const q: RefQuery = {
        start: wide ? now - 4 * 3600_000 : now - r.int(10, 60) * 60_000,
        end: now + 60_000,
        ...env,
        body: uniqueBody,
        url: uniqueUrl,
        sort,
        page: r.pick([1, 1, 1, 2, 3]),
        pageSize: r.pick([5, 20, 100]),
      };
      const params = new URLSearchParams({
        start_time: new Date(q.start).toISOString(),
        end_time: new Date(q.end).toISOString(),
        sort_by: sort,
        page: String(q.page),
        page_size: String(q.pageSize),
      });
      if (q.allEnvs !== undefined) params.set('all_envs', String(q.allEnvs));
      if (q.isTest !== undefined) params.set('is_test', String(q.isTest));
      for (const f of uniqueUrl) {
        const plain = f.operator === '' && f.connector === 'AND' && r.next() < 0.5;
        const name = f.field.startsWith('metadata__') && r.next() < 0.5 ? f.field.slice(10) : f.field;
        if (plain) params.append(name, String(f.values[0]));
        else {
          params.append(`${name}[value]`, String(f.values[0]));
          if (f.operator !== '' || r.next() < 0.3) params.append(`${name}[operator]`, f.operator);
          params.append(`${name}[connector]`, f.connector);
        }
      }
      const filters = Object.fromEntries(uniqueBody.map((f) => [f.field, { operator: f.operator, value: f.values }]));
      const res = await api(t.baseUrl, 'POST', `/api/request-logs/list/?${params}`, { key: a.key, body: { filters } });
      const context = `query ${n}: ${params} ${JSON.stringify(filters)}`;
      assert.equal(res.status, 200, `${context}\n${res.text}`);
      const expected = runReference(items, rank, scoresOf, q);
      assert.equal(res.body.count, expected.count, context);
      assert.deepEqual(
        res.body.results.map((i: Item) => i.unique_id),
        expected.ids,
        context,
      );
    }
  });

  it('search: every value alone and ORed with another, with none, part and all of the logs indexed', async () => {
    const ids = (await t.db.db.selectFrom('logs').select('id').orderBy('id').execute()).map((row) => Number(row.id));
    const indexer = new SearchIndexer(t.db, null, null);
    const values: unknown[][] = [
      ...SEARCH_TERMS.map((v) => [v]),
      ...SEARCH_TERMS.map((v, i) => [v, SEARCH_TERMS[(i * 7 + 3) % SEARCH_TERMS.length]]),
    ];
    // Lowering the watermark is always safe: the logs above it are read directly again.
    for (const watermark of [0, ids[Math.floor(ids.length / 2)], null]) {
      if (watermark === null) await indexer.catchUp();
      else await t.db.db.updateTable('search_watermark').set({ log_id: watermark }).execute();
      for (const value of values) {
        const q: RefQuery = {
          start: now - 4 * 3600_000,
          end: now + 60_000,
          allEnvs: true,
          body: [{ field: 'search', operator: '', values: value }],
          url: [],
          sort: '-id',
          page: 1,
          pageSize: 1000,
        };
        const expected = runReference(items, rank, scoresOf, q);
        const params = new URLSearchParams({
          start_time: new Date(q.start).toISOString(),
          end_time: new Date(q.end).toISOString(),
          all_envs: 'true',
          page_size: '1000',
        });
        const context = `search ${JSON.stringify(value)}, watermark ${watermark ?? 'caught up'}`;
        const body = await api(t.baseUrl, 'POST', `/api/request-logs/list/?${params}`, {
          key: a.key,
          body: { filters: { search: { value } } },
        });
        assert.equal(body.status, 200, `${context}\n${body.text}`);
        assert.equal(body.body.count, expected.count, context);
        assert.deepEqual(
          body.body.results.map((i: Item) => i.unique_id),
          expected.ids,
          context,
        );
        if (value.length === 1) {
          // The URL quick filter: ?search=refund policy
          params.set('search', String(value[0]));
          const url = await api(t.baseUrl, 'GET', `/api/request-logs/list/?${params}`, { key: a.key });
          assert.equal(url.status, 200, `${context}\n${url.text}`);
          assert.deepEqual(
            url.body.results.map((i: Item) => i.unique_id),
            expected.ids,
            `${context} (URL)`,
          );
        }
      }
    }
    // The words are there to be found: most values match some logs and not all of them.
    const counts = SEARCH_TERMS.map(
      (v) =>
        runReference(items, rank, scoresOf, {
          start: 0,
          end: now + 60_000,
          allEnvs: true,
          body: [{ field: 'search', operator: '', values: [v] }],
          url: [],
          sort: '-id',
          page: 1,
          pageSize: 1,
        }).count,
    );
    assert.ok(counts.filter((c) => c > 0 && c < items.length).length >= SEARCH_TERMS.length / 2, `${counts}`);
  });
});
