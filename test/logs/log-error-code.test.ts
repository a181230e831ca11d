/**
 * A logged call's error_code (docs/api.md "Logging API", "The log record"): optional, at most 100
 * characters, read back in the log, its list and its export, filtered by every string operator and by
 * isnull (lists and summaries), offered in filter_options with its counts, and copied into a dataset
 * with its log.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';

describe("a logged call's error_code", () => {
  let t: TestApp;
  let a: Tenant;
  const call = (method: string, path: string, body?: unknown) => api(t.baseUrl, method, path, { key: a.key, body });
  /** id → the logs seeded, by their names (custom_identifier). */
  const ids = new Map<string, string>();

  before(async () => {
    t = await startApp();
    a = await t.tenant();
    const logs = [
      { custom_identifier: 'limited-1', status_code: 429, error_message: 'Too many calls', error_code: 'rate_limited' },
      { custom_identifier: 'limited-2', status_code: 429, error_code: 'rate_limited' },
      { custom_identifier: 'budget', status_code: 402, error_message: 'Out of budget', error_code: 'budget_exceeded' },
      { custom_identifier: 'failed-no-code', status_code: 500, error_message: 'It broke' },
      { custom_identifier: 'fine', error_code: null },
    ];
    const res = await call('POST', '/api/request-logs/batch/', { logs });
    assert.equal(res.status, 201, res.text);
    (res.body.unique_ids as string[]).forEach((id, i) => ids.set(logs[i].custom_identifier, id));
  });
  after(() => t.close());

  /** The names of the logs a body filter lists. */
  const namesListed = async (filters: unknown): Promise<string[]> => {
    const res = await call('POST', '/api/request-logs/list/', { filters });
    assert.equal(res.status, 200, res.text);
    return (res.body.results as { custom_identifier: string }[]).map((r) => r.custom_identifier).sort();
  };

  it('reads back as given, in the log and in its list; null when none was given', async () => {
    const one = await call('GET', `/api/request-logs/${ids.get('limited-1')}/`);
    assert.equal(one.status, 200, one.text);
    assert.equal(one.body.error_code, 'rate_limited');
    assert.equal(one.body.error_message, 'Too many calls');
    const created = await call('POST', '/api/request-logs/create/', {
      status_code: 403,
      error_code: 'permission_denied',
    });
    assert.equal(created.status, 201, created.text);
    const read = await call('GET', `/api/request-logs/${created.body.unique_id}/`);
    assert.equal(read.body.error_code, 'permission_denied');
    const listed = await call('GET', '/api/request-logs/list/?page_size=100');
    const byName = new Map(
      (listed.body.results as { custom_identifier: string | null; error_code: string | null }[]).map((r) => [
        r.custom_identifier,
        r.error_code,
      ]),
    );
    assert.equal(byName.get('budget'), 'budget_exceeded');
    assert.equal(byName.get('failed-no-code'), null);
    assert.equal(byName.get('fine'), null);
    // Deleted again: the tests below count the seeded logs.
    assert.equal((await call('DELETE', `/api/request-logs/${created.body.unique_id}/`)).status, 204);
  });

  it('refuses a code longer than 100 characters, naming the field', async () => {
    assert.equal((await call('POST', '/api/request-logs/create/', { error_code: 'x'.repeat(100) })).status, 201);
    const res = await call('POST', '/api/request-logs/create/', { error_code: 'x'.repeat(101) });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.param, 'error_code');
    const batch = await call('POST', '/api/request-logs/batch/', { logs: [{}, { error_code: 'y'.repeat(101) }] });
    assert.equal(batch.status, 400, batch.text);
    assert.equal(batch.body.error.param, 'logs.1.error_code');
    const notText = await call('POST', '/api/request-logs/create/', { error_code: 42 });
    assert.equal(notText.status, 400, notText.text);
    assert.equal(notText.body.error.param, 'error_code');
    const filters = { error_code: { operator: '', value: ['x'.repeat(100)] } };
    const longOnes = (await call('POST', '/api/request-logs/list/', { filters })).body.results as {
      unique_id: string;
    }[];
    for (const log of longOnes) await call('DELETE', `/api/request-logs/${log.unique_id}/`);
  });

  it('is filtered by every string operator and by isnull', async () => {
    const f = (operator: string, value: unknown[]) => ({ error_code: { operator, value } });
    assert.deepEqual(await namesListed(f('', ['rate_limited'])), ['limited-1', 'limited-2']);
    assert.deepEqual(await namesListed(f('in', ['rate_limited', 'budget_exceeded'])), [
      'budget',
      'limited-1',
      'limited-2',
    ]);
    assert.deepEqual(await namesListed(f('iexact', ['BUDGET_EXCEEDED'])), ['budget']);
    assert.deepEqual(await namesListed(f('contains', ['limit'])), ['limited-1', 'limited-2']);
    assert.deepEqual(await namesListed(f('icontains', ['LIMIT'])), ['limited-1', 'limited-2']);
    assert.deepEqual(await namesListed(f('startswith', ['budget'])), ['budget']);
    assert.deepEqual(await namesListed(f('endswith', ['_exceeded'])), ['budget']);
    assert.deepEqual(await namesListed(f('isnull', [true])), ['failed-no-code', 'fine']);
    assert.deepEqual(await namesListed(f('isnull', [false])), ['budget', 'limited-1', 'limited-2']);
    // A log without a code differs from every value.
    assert.deepEqual(await namesListed(f('not', ['rate_limited'])), ['budget', 'failed-no-code', 'fine']);
    // In a URL too.
    const res = await call('GET', '/api/request-logs/list/?error_code=budget_exceeded');
    assert.deepEqual(
      (res.body.results as { custom_identifier: string }[]).map((r) => r.custom_identifier),
      ['budget'],
    );
  });

  it('filters a summary: a filter every code meets still leaves out the logs without one', async () => {
    const count = async (filters: unknown) => {
      const res = await call('POST', '/api/request-logs/summary/', { filters });
      assert.equal(res.status, 200, res.text);
      return res.body.totals.values[0] as number;
    };
    assert.equal(await count({}), 5);
    assert.equal(await count({ error_code: { operator: 'in', value: ['rate_limited', 'budget_exceeded'] } }), 3);
    assert.equal(await count({ error_code: { operator: '', value: ['rate_limited'] } }), 2);
  });

  it('is offered in filter_options with each code’s count, a null none', async () => {
    const res = await call('GET', '/api/request-logs/list/?page_size=1&fetch_filters=true');
    assert.equal(res.status, 200, res.text);
    const option = res.body.filter_options.error_code;
    assert.equal(option.value_field_type, 'selection');
    assert.deepEqual(
      (option.operator_choices as { value: string }[]).map((c) => c.value),
      ['', 'iexact', 'contains', 'icontains', 'startswith', 'endswith', 'in', 'isnull', 'not'],
    );
    assert.deepEqual(
      (option.value_choices as { value: string; count: number }[]).map((c) => [c.value, c.count]),
      [
        ['rate_limited', 2],
        ['budget_exceeded', 1],
      ],
    );
  });

  it('is a column of the CSV export by default, and a field of each JSON line', async () => {
    const res = await fetch(`${t.baseUrl}/api/request-logs/export/?format=csv&custom_identifier=budget`, {
      headers: { authorization: `Bearer ${a.key}` },
    });
    assert.equal(res.status, 200);
    const [header, line] = (await res.text()).trim().split('\r\n');
    const at = header.split(',').indexOf('error_code');
    assert.ok(at > header.split(',').indexOf('error_message'), header);
    assert.equal(line.split(',')[at], 'budget_exceeded');
    const jsonl = await fetch(`${t.baseUrl}/api/request-logs/export/?custom_identifier=limited-2`, {
      headers: { authorization: `Bearer ${a.key}` },
    });
    assert.equal((JSON.parse((await jsonl.text()).trim()) as { error_code: string }).error_code, 'rate_limited');
  });

  it('is copied into a dataset with its log; a log added by hand has none', async () => {
    const ds = await call('POST', '/api/datasets/', { name: 'refusals' });
    assert.equal(ds.status, 201, ds.text);
    const added = await call('POST', `/api/datasets/${ds.body.id}/logs/`, {
      log_ids: [ids.get('budget'), ids.get('fine')],
    });
    assert.equal(added.status, 201, added.text);
    const listed = await call('GET', `/api/datasets/${ds.body.id}/logs/list/`);
    assert.equal(listed.status, 200, listed.text);
    const bySource = new Map(
      (listed.body.results as { source_log_unique_id: string; error_code: string | null }[]).map((r) => [
        r.source_log_unique_id,
        r.error_code,
      ]),
    );
    assert.deepEqual([bySource.get(ids.get('budget')!), bySource.get(ids.get('fine')!)], ['budget_exceeded', null]);
    const one = await call('GET', `/api/datasets/${ds.body.id}/logs/${added.body.ids[0]}/`);
    assert.equal(one.status, 200, one.text);
    assert.ok('error_code' in one.body);
  });
});
