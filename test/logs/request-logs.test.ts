import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';

describe('the logging API: create, read, patch, delete', () => {
  let t: TestApp;
  let a: Tenant;
  const create = (body: unknown, key = a.key) => api(t.baseUrl, 'POST', '/api/request-logs/create/', { key, body });
  const get = async (uniqueId: string, key = a.key) => {
    await t.flush();
    return api(t.baseUrl, 'GET', `/api/request-logs/${uniqueId}/`, { key });
  };

  before(async () => {
    t = await startApp();
    a = await t.tenant({ owner: { email: 'dev@acme.test', first_name: 'Dev', last_name: 'Ops' } });
  });
  after(() => t.close());

  it('creates a chat log with the defaults and derived fields', async () => {
    const res = await create({
      model: 'gpt-4o-mini',
      input: [{ role: 'user', content: 'Hi' }],
      output: { choices: [{ message: { role: 'assistant', content: 'Hello!' } }] },
      usage: { prompt_tokens: 10, completion_tokens: 30 },
      generation_time: 2,
      ttft: 0.5,
      customer_identifier: 'cust-1',
    });
    assert.equal(res.status, 201);
    assert.equal(res.body.message, 'log successful');
    assert.match(res.body.unique_id, /^[0-9a-f-]{36}$/);
    const item = (await get(res.body.unique_id)).body;
    assert.equal(item.unique_id, res.body.unique_id);
    assert.equal(item.log_type, 'chat');
    assert.equal(item.log_method, 'logging_api');
    assert.equal(item.status_code, 200);
    assert.equal(item.status, 'success');
    assert.equal(item.failed, false);
    assert.equal(item.stream, false);
    assert.deepEqual(item.metadata, {});
    assert.equal(item.environment, 'prod');
    assert.equal(item.is_test, false);
    assert.equal(item.user, 'dev@acme.test');
    assert.equal(item.organization, a.org.name);
    assert.equal(item.organization_key__name, 'test-key');
    assert.deepEqual(item.prompt_messages, [{ role: 'user', content: 'Hi' }]);
    assert.deepEqual(item.completion_message, { role: 'assistant', content: 'Hello!' });
    assert.deepEqual(JSON.parse(item.input), [{ role: 'user', content: 'Hi' }]);
    assert.equal(typeof item.output, 'string');
    assert.equal(item.prompt_tokens, 10);
    assert.equal(item.completion_tokens, 30);
    assert.equal(item.total_request_tokens, 40);
    assert.equal(item.latency, 2);
    assert.equal(item.time_to_first_token, 0.5);
    assert.equal(item.tokens_per_second, 20);
    // gpt-4o-mini at the catalog's $0.15 in and $0.60 out per million tokens.
    assert.equal(item.cost, 0.0000195);
    assert.equal(item.customer_identifier, 'cust-1');
    assert.equal(item.customer_email, '');
    assert.equal(item.tool_calls, null);
    assert.deepEqual(item.scores, {});
    assert.match(item.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    for (const field of ['span_unique_id', 'span_name', 'span_workflow_name', 'prompt_id', 'thread_identifier']) {
      assert.ok(field in item, field);
    }
  });

  it('derives input/output from messages, and messages from {messages}', async () => {
    const fromMessages = await create({
      prompt_messages: [{ role: 'system', content: 'Be brief' }],
      completion_message: { role: 'assistant', content: 'OK' },
    });
    const item = (await get(fromMessages.body.unique_id)).body;
    assert.deepEqual(JSON.parse(item.input), [{ role: 'system', content: 'Be brief' }]);
    assert.deepEqual(JSON.parse(item.output), { role: 'assistant', content: 'OK' });
    assert.deepEqual(item.completion_message, { role: 'assistant', content: 'OK' });

    const wrapped = await create({
      log_type: 'response',
      input: JSON.stringify({ messages: [{ role: 'user', content: 'x' }] }),
    });
    const w = (await get(wrapped.body.unique_id)).body;
    assert.deepEqual(w.prompt_messages, [{ role: 'user', content: 'x' }]);
    assert.equal(w.completion_message, null);
  });

  it('gives embedding logs their own fields and a cost from the price table', async () => {
    const res = await create({
      log_type: 'embedding',
      model: 'text-embedding-3-small',
      prompt_tokens: 1000,
      input: 'hello',
      embedding_dimensions: 1536,
      embedding_count: 1,
    });
    const item = (await get(res.body.unique_id)).body;
    assert.equal(item.cost, 0.00002);
    assert.equal(item.embedding_dimensions, 1536);
    assert.equal(item.embedding_count, 1);
    assert.ok(!('prompt_messages' in item));
    assert.ok(!('completion_message' in item));
    assert.equal(item.input, '"hello"');
  });

  it('gives span logs the span fields, and failed logs status error and no cost', async () => {
    const span = await create({ log_type: 'workflow', span_name: 'plan', span_workflow_name: 'agent-run' });
    const s = (await get(span.body.unique_id)).body;
    assert.equal(s.span_unique_id, span.body.unique_id);
    assert.equal(s.span_name, 'plan');
    assert.equal(s.span_workflow_name, 'agent-run');
    assert.equal(s.span_parent_id, null);

    const failed = await create({
      model: 'text-embedding-3-small',
      log_type: 'embedding',
      prompt_tokens: 5000,
      status_code: 500,
      error_message: 'boom',
    });
    const f = (await get(failed.body.unique_id)).body;
    assert.equal(f.status, 'error');
    assert.equal(f.failed, true);
    assert.equal(f.cost, 0);
    assert.equal(f.error_message, 'boom');
  });

  it('takes the environment from a test key, and server-owned fields from the server', async () => {
    const testTenant = await t.tenant({ isTest: true });
    const res = await create(
      { is_test: false, organization: 'forged', user: 'forged', log_method: 'forged', id: 5, unknown_field: 1 },
      testTenant.key,
    );
    assert.equal(res.status, 201);
    const item = (await get(res.body.unique_id, testTenant.key)).body;
    assert.equal(item.is_test, true);
    assert.equal(item.environment, 'test');
    assert.equal(item.organization, testTenant.org.name);
    assert.equal(item.user, '');
    assert.equal(item.log_method, 'logging_api');
    assert.ok(!('unknown_field' in item));
  });

  it('rejects bad fields with a 400 naming them, storing nothing', async () => {
    const cases: [unknown, string | null][] = [
      [{ cost: 'abc' }, 'cost'],
      [{ prompt_tokens: -1 }, 'prompt_tokens'],
      [{ customer_identifier: 'x'.repeat(121) }, 'customer_identifier'],
      [{ metadata: ['a'] }, 'metadata'],
      [{ metadata: 'a' }, 'metadata'],
      [{ log_type: 'nonsense' }, 'log_type'],
      [{ timestamp: 'yesterday' }, 'timestamp'],
      [{ stream: 'yes' }, 'stream'],
      [{ status_code: 42 }, 'status_code'],
      [{ usage: { prompt_tokens: 'many' } }, 'usage.prompt_tokens'],
      [[1, 2], null],
    ];
    const before = await api(t.baseUrl, 'GET', '/api/request-logs/list/?all_envs=true', { key: a.key });
    for (const [body, param] of cases) {
      const res = await create(body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.error.param, param, JSON.stringify(body));
      assert.equal(res.body.error.type, 'invalid_request_error');
      if (param) assert.match(res.body.detail, new RegExp(param.replace('.', '\\.')));
    }
    await t.flush();
    const afterList = await api(t.baseUrl, 'GET', '/api/request-logs/list/?all_envs=true', { key: a.key });
    assert.equal(afterList.body.count, before.body.count);
  });

  it('answers 413 for a body over 20 MB', async () => {
    const res = await create({ input: 'x'.repeat(21 * 1024 * 1024) });
    assert.equal(res.status, 413);
    assert.equal(res.body.error.type, 'invalid_request_error');
  });

  it('patches metadata and custom_identifier only', async () => {
    const res = await create({ metadata: { a: 1, b: 'x' }, custom_identifier: 'c1' });
    const id = res.body.unique_id;
    const patched = await api(t.baseUrl, 'PATCH', `/api/request-logs/${id}/`, {
      key: a.key,
      body: { metadata: { c: true }, custom_identifier: 'c2' },
    });
    assert.equal(patched.status, 200);
    assert.deepEqual(patched.body.metadata, { c: true });
    assert.equal(patched.body.custom_identifier, 'c2');
    const refused = await api(t.baseUrl, 'PATCH', `/api/request-logs/${id}/`, { key: a.key, body: { cost: 3 } });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.detail, "The field 'cost' cannot be modified");
    assert.equal(refused.body.error.param, 'cost');
    const badMeta = await api(t.baseUrl, 'PATCH', `/api/request-logs/${id}/`, { key: a.key, body: { metadata: 3 } });
    assert.equal(badMeta.status, 400);
    assert.deepEqual((await get(id)).body.metadata, { c: true });
  });

  it('deletes a log', async () => {
    const res = await create({});
    await t.flush();
    const del = await api(t.baseUrl, 'DELETE', `/api/request-logs/${res.body.unique_id}/`, { key: a.key });
    assert.equal(del.status, 204);
    assert.equal((await get(res.body.unique_id)).status, 404);
  });

  it("treats another organization's log as missing", async () => {
    const res = await create({ metadata: { k: 'v' } });
    const b = await t.tenant();
    const path = `/api/request-logs/${res.body.unique_id}/`;
    for (const [method, body] of [['GET'], ['PATCH', { metadata: {} }], ['DELETE']] as const) {
      const r = await api(t.baseUrl, method, path, { key: b.key, body });
      assert.equal(r.status, 404, method);
      assert.equal(r.body.error.type, 'not_found_error');
    }
    assert.deepEqual((await get(res.body.unique_id)).body.metadata, { k: 'v' });
  });
});
