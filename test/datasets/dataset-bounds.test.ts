/**
 * Dataset logs take the logging API's bounds and their lists stay small: a hand-written log's numbers
 * are refused where they would not store or read back (a latency that makes start_time no date broke
 * every later list of its dataset), its texts are bounded, and list items hold previews of large inputs
 * and outputs, the whole log being one GET away.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';

describe('dataset log bounds', () => {
  let t: TestApp;
  let a: Tenant;
  let dataset: string;
  const call = (method: string, path: string, body?: unknown) => api(t.baseUrl, method, path, { key: a.key, body });

  before(async () => {
    t = await startApp();
    a = await t.tenant();
    dataset = (await call('POST', '/api/datasets/', { name: 'bounds' })).body.id;
  });
  after(() => t.close());

  it('refuses hand-written metrics that would not store or read back, naming the field', async () => {
    const cases: [Record<string, number>, string][] = [
      [{ latency: 1e13 }, 'metrics.latency'],
      [{ latency: 1e300 }, 'metrics.latency'],
      [{ cost: 1e300 }, 'metrics.cost'],
      [{ prompt_tokens: 2 ** 31 }, 'metrics.prompt_tokens'],
      [{ prompt_tokens: 2_000_000_000, completion_tokens: 2_000_000_000 }, 'metrics.completion_tokens'],
    ];
    for (const [metrics, param] of cases) {
      const res = await call('POST', `/api/datasets/${dataset}/logs/`, { input: 'q', output: 'a', metrics });
      assert.equal(res.status, 400, `${JSON.stringify(metrics)}: ${res.text}`);
      assert.equal(res.body.error.param, param, res.text);
    }
    // The bounds themselves are accepted, and the dataset lists afterwards.
    const edge = { latency: 31_536_000, prompt_tokens: 2_147_483_000, completion_tokens: 647, cost: 1_000_000 };
    const ok = await call('POST', `/api/datasets/${dataset}/logs/`, { input: 'q', output: 'a', metrics: edge });
    assert.equal(ok.status, 201, ok.text);
    const list = await call('GET', `/api/datasets/${dataset}/logs/list/`);
    assert.equal(list.status, 200, list.text);
    const item = list.body.results.find((r: { id: string }) => r.id === ok.body.ids[0]);
    assert.equal(item.total_request_tokens, 2_147_483_647);
    assert.equal(Date.parse(item.timestamp) - Date.parse(item.start_time), 31_536_000_000);
  });

  it('refuses a logged log whose token total would not fit, as the dataset route does', async () => {
    const direct = await call('POST', '/api/request-logs/create/', {
      prompt_tokens: 2_000_000_000,
      completion_tokens: 2_000_000_000,
    });
    assert.equal(direct.status, 400, direct.text);
    assert.equal(direct.body.error.param, 'completion_tokens');
    const usage = await call('POST', '/api/request-logs/create/', {
      usage: { prompt_tokens: 2_000_000_000, completion_tokens: 2_000_000_000 },
    });
    assert.equal(usage.status, 400, usage.text);
    assert.equal(usage.body.error.param, 'usage.completion_tokens');
  });

  it('bounds a hand-written input and output, on add and on PATCH', async () => {
    const big = 'x'.repeat(1024 * 1024 + 1);
    const add = await call('POST', `/api/datasets/${dataset}/logs/`, { input: big, output: 'a' });
    assert.equal(add.status, 400, add.text.slice(0, 300));
    assert.equal(add.body.error.param, 'input');
    assert.equal(add.body.error.code, 'value_too_long');
    const small = await call('POST', `/api/datasets/${dataset}/logs/`, { input: 'q', output: 'a' });
    assert.equal(small.status, 201);
    const id = small.body.ids[0];
    const patch = await call('PATCH', `/api/datasets/${dataset}/logs/${id}/`, { output: big });
    assert.equal(patch.status, 400, patch.text.slice(0, 300));
    assert.equal(patch.body.error.param, 'output');
    // Nothing was changed by the refused PATCH.
    assert.equal((await call('GET', `/api/datasets/${dataset}/logs/${id}/`)).body.output, '"a"');
  });

  it('lists large logs as previews named in truncated_fields; the item route has them whole', async () => {
    const fat = await call('POST', '/api/datasets/', { name: 'fat' });
    const input = [{ role: 'user', content: 'i'.repeat(3_000_000) }];
    const output = { role: 'assistant', content: 'o'.repeat(3_000_000) };
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await call('POST', '/api/request-logs/create/', { model: 'm', input, output });
      assert.equal(res.status, 201, res.text.slice(0, 300));
      ids.push(res.body.unique_id);
    }
    const added = await call('POST', `/api/datasets/${fat.body.id}/logs/`, { log_ids: ids });
    assert.equal(added.status, 201, added.text);
    await call('POST', `/api/datasets/${fat.body.id}/logs/`, { input: 'short', output: 'reply' });

    const list = await call('GET', `/api/datasets/${fat.body.id}/logs/list/?page_size=100`);
    assert.equal(list.status, 200);
    // Six logs, five of them 6 MB each: the page holds previews, not 30 MB.
    assert.ok(list.text.length < 200_000, `a page of ${list.text.length} characters`);
    assert.equal(list.body.results.length, 6);
    const large = list.body.results.filter((r: { source_log_unique_id: string | null }) => r.source_log_unique_id);
    assert.equal(large.length, 5);
    for (const item of large) {
      assert.deepEqual(item.truncated_fields, ['input', 'prompt', 'output', 'completion']);
      assert.equal(item.input.length, 8192);
      assert.equal(item.output.length, 8192);
      assert.equal(item.prompt, '');
      assert.equal(item.completion, '');
    }
    const short = list.body.results.find((r: { source_log_unique_id: string | null }) => !r.source_log_unique_id);
    assert.deepEqual(short.truncated_fields, []);
    assert.equal(short.prompt, 'short');
    assert.equal(short.completion, 'reply');

    const whole = await call('GET', `/api/datasets/${fat.body.id}/logs/${large[0].id}/`);
    assert.equal(whole.status, 200);
    assert.equal(whole.body.truncated_fields, undefined);
    assert.equal(whole.body.prompt.length, 3_000_000);
    assert.equal(whole.body.completion.length, 3_000_000);
    assert.deepEqual(JSON.parse(whole.body.input), input);
  });
});
