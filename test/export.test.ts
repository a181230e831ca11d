/** GET|POST /api/request-logs/export/: every matching log, streamed as JSON Lines or CSV. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { csvField, csvLine } from '../src/util/csv.js';
import { EXPORT_CHUNK } from '../src/http/export.js';
import { api, startApp, type Tenant, type TestApp } from './support/harness.js';

const TOTAL = EXPORT_CHUNK * 2 + 234;

describe('export of logs', () => {
  let t: TestApp;
  let a: Tenant;
  let b: Tenant;
  const start = new Date(Date.now() - 3_600_000).toISOString();

  before(async () => {
    t = await startApp();
    a = await t.tenant();
    b = await t.tenant();
    const base = Date.now() - 30 * 60_000;
    const all = Array.from({ length: TOTAL }, (_, i) => ({
      model: i % 2 === 0 ? 'even-model' : 'odd-model',
      input: i === 1 ? 'has, a comma and a "quote"\nand a line' : `input ${i}`,
      customer_identifier: i === 3 ? '=HYPERLINK("x")' : `customer-${i}`,
      output: `output ${i}`,
      metadata: { n: i, group: i % 5 === 0 ? 'fives' : 'rest' },
      timestamp: new Date(base + i * 1000).toISOString(),
    }));
    for (let at = 0; at < all.length; at += 1000) {
      const res = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', {
        key: a.key,
        body: all.slice(at, at + 1000),
      });
      assert.equal(res.status, 201, res.text);
    }
  });
  after(() => t.close());

  const exported = (tenant: Tenant, query: string, init: RequestInit = {}) =>
    fetch(`${t.baseUrl}/api/request-logs/export/?start_time=${start}${query}`, {
      ...init,
      headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
    });

  it('streams every matching log once, newest first, across chunks: the same logs the list pages hold', async () => {
    const res = await exported(a, '');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/x-ndjson/);
    assert.match(res.headers.get('content-disposition') ?? '', /^attachment; filename="gatelog-logs-.*\.jsonl"$/);
    const lines = (await res.text()).split('\n').filter(Boolean);
    assert.equal(lines.length, TOTAL);
    const items = lines.map((l) => JSON.parse(l) as { unique_id: string; metadata: { n: number }; model: string });
    assert.equal(new Set(items.map((i) => i.unique_id)).size, TOTAL, 'no log twice');
    assert.deepEqual(
      items.map((i) => i.metadata.n),
      Array.from({ length: TOTAL }, (_, i) => TOTAL - 1 - i),
      'newest first',
    );
    const listed: string[] = [];
    for (let page = 1; page <= 2; page++) {
      const list = await api(
        t.baseUrl,
        'GET',
        `/api/request-logs/list/?start_time=${start}&page_size=1000&page=${page}`,
        {
          key: a.key,
        },
      );
      listed.push(...(list.body.results as { unique_id: string }[]).map((r) => r.unique_id));
    }
    assert.deepEqual(
      items.map((i) => i.unique_id),
      listed,
    );
  });

  it('takes body and URL filters, and writes CSV with the chosen fields, quoted and formula-safe', async () => {
    const res = await exported(a, '&format=csv&fields=unique_id,model,customer_identifier,input,metadata&group=rest', {
      method: 'POST',
      body: JSON.stringify({ filters: { model: { value: ['odd-model'] } } }),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/csv/);
    const text = await res.text();
    const expected = Array.from({ length: TOTAL }, (_, i) => i).filter((i) => i % 2 === 1 && i % 5 !== 0);
    assert.ok(text.startsWith('unique_id,model,customer_identifier,input,metadata\r\n'));
    // One line per log, but the comma-and-newline input spans two physical lines inside its quotes.
    assert.equal(text.split('\r\n').filter(Boolean).length, expected.length + 1);
    assert.ok(text.includes('"""has, a comma and a \\""quote\\""\\nand a line"""'), 'input is JSON text, quoted');
    assert.ok(text.includes(`,"'=HYPERLINK(""x"")",`), 'a formula is written after a single quote');
    assert.ok(text.includes('"{""n"":1,""group"":""rest""}"'), 'metadata as JSON');
  });

  it('refuses a bad format or field before sending anything, and shows one organization none of another', async () => {
    const badFormat = await exported(a, '&format=xlsx');
    assert.equal(badFormat.status, 400);
    assert.equal(((await badFormat.json()) as { error: { param: string } }).error.param, 'format');
    const badField = await exported(a, '&format=csv&fields=unique_id,secret_sauce');
    assert.equal(badField.status, 400);
    assert.match(((await badField.json()) as { error: { message: string } }).error.message, /secret_sauce/);
    const other = await exported(b, '&all_envs=true');
    assert.equal(other.status, 200);
    assert.equal(await other.text(), '');
    const unauthenticated = await fetch(`${t.baseUrl}/api/request-logs/export/`);
    assert.equal(unauthenticated.status, 401);
  });
});

describe('CSV fields', () => {
  it('quotes commas, quotes and line breaks; writes JSON for objects; guards formulas', () => {
    assert.equal(csvField('plain'), 'plain');
    assert.equal(csvField('a,b'), '"a,b"');
    assert.equal(csvField('say "hi"'), '"say ""hi"""');
    assert.equal(csvField('two\nlines'), '"two\nlines"');
    assert.equal(csvField(null), '');
    assert.equal(csvField(undefined), '');
    assert.equal(csvField(-1.5), '-1.5');
    assert.equal(csvField(true), 'true');
    assert.equal(csvField({ a: [1, '2'] }), '"{""a"":[1,""2""]}"');
    for (const formula of ['=1+1', '+1', '-1', '@SUM(A1)', '\tx']) assert.equal(csvField(formula), `'${formula}`);
    assert.equal(csvLine(['a', 1, null]), 'a,1,\r\n');
  });
});
