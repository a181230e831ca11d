/** Datasets (docs/api.md "Datasets"): creation, adding and removing logs, copies, annotation, isolation. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createApiKey } from '../../src/auth/api-keys.js';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';

const HOUR = 3600_000;

describe('datasets', () => {
  let t: TestApp;
  let a: Tenant;
  const call = (method: string, path: string, body?: unknown, key = a.key) =>
    api(t.baseUrl, method, path, { key, body });
  const at = (msAgo: number) => new Date(Date.now() - msAgo).toISOString();
  /** Logs of tenant `a` through the logging API; answers their unique_ids. */
  const seed = async (logs: Record<string, unknown>[], key = a.key) => {
    const res = await call('POST', '/api/request-logs/batch/', { logs }, key);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.unique_ids as string[];
  };
  const create = async (body: Record<string, unknown>, key = a.key) => {
    const res = await call('POST', '/api/datasets/', body, key);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body as { id: string; log_count: number; completed_annotation_count: number; type: string };
  };
  const logsOf = async (id: string, query = '', body?: unknown) => {
    const res = await call(body ? 'POST' : 'GET', `/api/datasets/${id}/logs/list/${query}`, body);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as { count: number; results: Record<string, unknown>[]; filter_options: Record<string, unknown> };
  };

  before(async () => {
    t = await startApp();
    a = await t.tenant({ owner: { email: 'dev-7@example.com', first_name: 'Developer', last_name: 'One' } });
  });
  after(() => t.close());

  it('creates an empty dataset, reads, lists, renames and deletes it', async () => {
    const ds = await create({ name: 'golden', description: 'the best' });
    assert.equal(ds.log_count, 0);
    assert.equal(ds.type, 'manual');
    const read = await call('GET', `/api/datasets/${ds.id}/`);
    assert.equal(read.body.name, 'golden');
    assert.equal(read.body.status, 'ready');
    for (const path of ['/api/datasets/', '/api/datasets/list/']) {
      const list = await call('GET', path);
      assert.ok(list.body.results.some((d: { id: string }) => d.id === ds.id));
    }
    const patched = await call('PATCH', `/api/datasets/${ds.id}/`, { name: 'silver' });
    assert.equal(patched.body.name, 'silver');
    assert.equal(patched.body.description, 'the best');
    assert.equal((await call('DELETE', `/api/datasets/${ds.id}/`)).status, 204);
    assert.equal((await call('GET', `/api/datasets/${ds.id}/`)).status, 404);
  });

  it('copies the matching logs of a time range, all environments, sampled to round(n·p/100)', async () => {
    const tag = `run-${Date.now()}`;
    const testKey = (await createApiKey(t.db.db, { organizationId: a.org.id, name: 'test', isTest: true })).key;
    await seed(
      Array.from({ length: 7 }, (_, i) => ({ model: 'gpt-4o', metadata: { tag }, cost: i, timestamp: at(10_000) })),
    );
    await seed([{ model: 'gpt-4o', metadata: { tag }, timestamp: at(10_000) }], testKey);
    await seed([{ model: 'other', metadata: { tag }, timestamp: at(10_000) }]);
    await seed([{ model: 'gpt-4o', metadata: { tag }, timestamp: at(3 * HOUR) }]);
    const body = {
      name: 'sample',
      start_time: at(HOUR),
      end_time: at(0),
      initial_log_filters: { model: { value: ['gpt-4o'] }, [`metadata__tag`]: { value: [tag] } },
    };
    const all = await create(body);
    assert.equal(all.log_count, 8); // 7 production logs and 1 test log
    const environments = (await logsOf(all.id)).results.map((l) => l.environment).sort();
    assert.deepEqual(environments, [...Array(7).fill('prod'), 'test']);
    assert.equal((await create({ ...body, sampling: 50 })).log_count, 4); // round(4)
    assert.equal((await create({ ...body, sampling: 30 })).log_count, 2); // round(2.4)
    assert.equal((await create({ ...body, sampling: 10 })).log_count, 1); // round(0.8)
    assert.equal((await create({ ...body, sampling: 0 })).log_count, 0);
  });

  it('adds logs by id all or nothing, never the same log twice, and answers the new ids', async () => {
    const ids = await seed([{ model: 'a' }, { model: 'b' }]);
    const ds = await create({ name: 'by-id' });
    const bad = await call('POST', `/api/datasets/${ds.id}/logs/`, { log_ids: [ids[0], 'nope-1', 'nope-2'] });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.param, 'log_ids');
    assert.match(bad.body.error.message, /nope-1, nope-2/);
    assert.equal((await call('GET', `/api/datasets/${ds.id}/`)).body.log_count, 0);
    const added = await call('POST', `/api/datasets/${ds.id}/logs/`, { log_ids: ids });
    assert.equal(added.status, 201);
    assert.equal(added.body.added_count, 2);
    assert.equal(added.body.ids.length, 2);
    const again = await call('POST', `/api/datasets/${ds.id}/logs/`, { log_ids: [ids[1], ids[1]] });
    assert.deepEqual(again.body, { added_count: 0, ids: [] });
    assert.equal((await call('GET', `/api/datasets/${ds.id}/`)).body.log_count, 2);
  });

  it("copies a failed log's error message, and a log added by hand has none", async () => {
    const [failed, fine] = await seed([
      { model: 'err-model', status_code: 502, error_message: 'provider unreachable' },
      { model: 'err-model' },
    ]);
    const ds = await create({ name: 'failures' });
    const added = await call('POST', `/api/datasets/${ds.id}/logs/`, { log_ids: [failed, fine] });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    const listed = await logsOf(ds.id);
    const bySource = new Map(listed.results.map((r) => [r.source_log_unique_id, r.error_message]));
    assert.deepEqual([bySource.get(failed), bySource.get(fine)], ['provider unreachable', null]);
    const one = await call('GET', `/api/datasets/${ds.id}/logs/${added.body.ids[0]}/`);
    assert.equal(one.status, 200);
    assert.ok('error_message' in one.body);
  });

  it('keeps copies as they were when the source log changes or goes', async () => {
    const [id] = await seed([
      {
        model: 'gpt-4o',
        metadata: { team: 'x' },
        prompt_messages: [{ role: 'user', content: 'hi there' }],
        output: 'hello',
      },
    ]);
    const ds = await create({ name: 'copies' });
    const { body } = await call('POST', `/api/datasets/${ds.id}/logs/`, { log_ids: [id] });
    const logId = body.ids[0] as string;
    await call('PATCH', `/api/request-logs/${id}/`, { metadata: { team: 'y' } });
    const copy = await call('GET', `/api/datasets/${ds.id}/logs/${logId}/`);
    assert.equal(copy.status, 200);
    assert.deepEqual(copy.body.metadata, { team: 'x' });
    assert.equal(copy.body.prompt, 'hi there');
    assert.equal(copy.body.completion, 'hello');
    assert.equal(copy.body.source_log_unique_id, id);
    assert.equal(copy.body.annotation_status, 'pending');
    assert.equal((await call('DELETE', `/api/request-logs/${id}/`)).status, 204);
    const still = await call('GET', `/api/datasets/${ds.id}/logs/${logId}/`);
    assert.equal(still.status, 200);
    assert.equal((await logsOf(ds.id, '?metadata__team=x')).count, 1);
  });

  it('adds one log written by hand and annotates it as the key owner', async () => {
    const ds = await create({ name: 'hand' });
    const added = await call('POST', `/api/datasets/${ds.id}/logs/`, {
      input: [
        { role: 'system', content: 's' },
        { role: 'user', content: 'question?' },
      ],
      output: { role: 'assistant', content: 'answer.' },
      model: 'gpt-4o',
      metadata: { split: 'eval' },
      metrics: { prompt_tokens: 3, completion_tokens: 2, cost: 0.5, latency: 1.25 },
    });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    const logId = added.body.ids[0] as string;
    const log = (await call('GET', `/api/datasets/${ds.id}/logs/${logId}/`)).body;
    assert.equal(log.prompt, 'question?');
    assert.equal(log.completion, 'answer.');
    assert.equal(log.log_type, 'chat');
    assert.equal(log.total_request_tokens, 5);
    assert.equal(log.source_log_unique_id, null);
    const done = await call('PATCH', `/api/datasets/${ds.id}/logs/${logId}/`, { annotation_status: 'completed' });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.deepEqual(done.body.annotation_completed_by, {
      first_name: 'Developer',
      last_name: 'One',
      email: 'dev-7@example.com',
    });
    assert.equal((await call('GET', `/api/datasets/${ds.id}/`)).body.completed_annotation_count, 1);
    const statuses = async () =>
      (await call('GET', `/api/datasets/${ds.id}/logs/list/`)).body.filter_options.annotation_status.value_choices.map(
        (c: { value: string }) => c.value,
      );
    assert.deepEqual(await statuses(), ['completed']);
    const other = await call('PATCH', `/api/datasets/${ds.id}/logs/${logId}/`, { annotation_status: 'needs review' });
    // filter_options are kept between calls, and never served after a change.
    assert.deepEqual(await statuses(), ['needs review']);
    assert.equal(other.body.annotation_status, 'needs review');
    assert.equal((await call('GET', `/api/datasets/${ds.id}/`)).body.completed_annotation_count, 0);
  });
});
